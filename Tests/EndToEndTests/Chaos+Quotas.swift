import Foundation
import StoreSimulator
import Testing

extension Chaos {
    /// The simulator refused at most one call for quota, and no app's endpoint got more calls
    /// in any window than the published limit (the simulator enforces the published limits, counted on the wall
    /// clock; Apple's per hour).
    ///
    /// One refusal per API is the gate's rule on a loaded host, not luck: a granted call that arrived later than the
    /// margin is refused once, and the refusal widens that API's margin for every process (migration 0014).
    /// - Parameters:
    ///   - allowingRefusals: the store may have refused calls the gate never granted (see `StoreFaultChaosTests`:
    ///     libcurl's own resend on a dropped connection); the windows are still checked.
    static func expectWithinQuotas(
        _ simulator: StoreSimulator, allowingRefusals: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let quotas = QuotaOptions()
        for statistics in simulator.statistics() {
            let label = "\(statistics.app) \(statistics.endpoint.rawValue)"
            if !allowingRefusals {
                #expect(statistics.refused <= 1, "\(label) refused", sourceLocation: sourceLocation)
            }
            switch statistics.endpoint {
            case .googleVoidedPurchases:
                #expect(
                    statistics.maxInAny30Seconds <= quotas.voidedPerWindow, "\(label)", sourceLocation: sourceLocation)
                #expect(statistics.maxInAnyMinute <= quotas.voidedPerMinute, "\(label)", sourceLocation: sourceLocation)
                #expect(
                    statistics.maxInAnyPacificDay <= quotas.voidedPerDay, "\(label)", sourceLocation: sourceLocation)
            case .googleSubscriptionsV2:
                #expect(
                    statistics.maxInAnyMinute <= quotas.subscriptionsPerMinute, "\(label)",
                    sourceLocation: sourceLocation)
            case .googleOrders, .googleReviewRefund:
                #expect(statistics.maxInAnyMinute <= quotas.voidedPerMinute, "\(label)", sourceLocation: sourceLocation)
            // Apple publishes its limits per second and enforces them per hour (as the simulator does): a test
            // shorter than an hour is within them when all its calls are. How evenly the gate paces them is its own
            // tests' business (a loaded host may deliver two granted calls in the same second).
            case .appleRefundHistory:
                #expect(
                    statistics.granted <= Int(quotas.appleRefundHistoryPerSecond * 3600), "\(label)",
                    sourceLocation: sourceLocation)
            case .appleNotificationHistory, .appleSubscriptionStatuses, .appleTransactionHistory, .appleConsumption:
                #expect(
                    statistics.granted <= Int(quotas.appleOtherPerSecond * 3600), "\(label)",
                    sourceLocation: sourceLocation)
            case .appleFinanceReports:
                #expect(statistics.maxInAnyMinute <= 3500, "\(label)", sourceLocation: sourceLocation)
            case .googleToken, .googleStorage, .googlePubSub:
                break
            }
        }
    }
}
