import Foundation
import PlayDeveloperAPI

/// Google `purchases.subscriptionsv2.get` for the recheck job. 404 is ``StatusReading/missing``; 410 Gone (a purchase
/// that expired about 60 days ago) is the end of the subscription (``GoogleStatusInterpreter/gone(_:)``).
public struct GoogleStatusSource: SubscriptionStatusSource {
    /// The client (its calls pass the job's quota gate).
    public let client: PlayDeveloperClient
    /// The app's package name.
    public let packageName: String

    /// Creates the source.
    public init(client: PlayDeveloperClient, packageName: String) {
        self.client = client
        self.packageName = packageName
    }

    public func read(_ subscription: StoredSubscription, now: Date) async throws -> StatusReading {
        let purchase: SubscriptionPurchaseV2
        do {
            purchase = try await client.subscriptionV2(
                packageName: packageName, token: subscription.storeId, purpose: .incremental)
        } catch let error as PlayAPIError {
            switch error.code {
            case .notFound: return .missing
            case .gone: return GoogleStatusInterpreter.gone(subscription)
            case .malformedResponse, .badRequest, .invalidArgument, .responseTooLarge:
                return .badAnswer("\(error)")
            default: throw error
            }
        }
        return GoogleStatusInterpreter.read(purchase, now: now)
    }
}
