import Foundation
import StoreSimulator
import Testing

extension Chaos {
    /// Waits until the Google voided calls made so far have left the store's 30-s window. Each round of a chaos test
    /// starts on a fresh database, whose quota gate knows nothing of the calls the rounds before made on the same
    /// simulated store (a new host with an empty database would likewise start after the old one stopped): without
    /// this a round's first burst could meet the end of the previous round's in one window and be refused. The apps
    /// run side by side, so a round ends within seconds of its last voided call.
    static func waitForVoidedWindow(_ simulator: StoreSimulator) async throws {
        let apps = Set(simulator.statistics().filter { $0.endpoint == .googleVoidedPurchases }.map(\.app))
        let last = apps.compactMap { simulator.grantTimes(app: $0, endpoint: .googleVoidedPurchases).last }.max()
        guard let last else { return }
        let wait = last + 31_000 - SimulatorClock.wallMillis()
        if wait > 0 { try await Task.sleep(for: .milliseconds(wait)) }
    }

    /// The simulator refused at most one call per database's night for quota, and no app's endpoint got more calls
    /// in any window than the published limit (the simulator enforces the published limits, counted on the wall
    /// clock; Apple's per hour).
    ///
    /// One refusal per API is the gate's rule on a loaded host, not luck: a granted call that arrived later than the
    /// margin is refused once, and the refusal widens that API's margin for every process (migration 0014).
    /// - Parameters:
    ///   - allowingRefusals: the store may have refused calls the gate never granted (see `StoreFaultChaosTests`:
    ///     libcurl's own resend on a dropped connection); the windows are still checked.
    ///   - databases: how many fresh databases (each with its own learnt margins) the calls came from.
    static func expectWithinQuotas(
        _ simulator: StoreSimulator, allowingRefusals: Bool = false, databases: Int = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let quotas = QuotaOptions()
        for statistics in simulator.statistics() {
            let label = "\(statistics.app) \(statistics.endpoint.rawValue)"
            if !allowingRefusals {
                #expect(statistics.refused <= databases, "\(label) refused", sourceLocation: sourceLocation)
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
