import ArgumentParser
import Foundation
import StoreSimulator

/// Options that shape a generated scenario.
struct ScenarioOptions: ParsableArguments {
    @Option(help: "Seed of every random choice: the same seed gives the same scenario.")
    var seed: UInt64 = 1

    @Option(help: "Subscriptions in all, shared evenly among the apps.")
    var subscriptions = 1000

    @Option(help: "One-time purchases (default: a fifth of --subscriptions).")
    var oneTimePurchases: Int?

    @Option(help: "Refunds and voids (default: a tenth of --subscriptions).")
    var refunds: Int?

    @Option(help: "Scenario reference time in ms since 1970, or 'now' (default).")
    var anchor = "now"

    @Option(help: "Days of history before the anchor.")
    var historyDays = 400

    @Option(help: "Days after the anchor in which events keep arriving as the clock advances.")
    var futureDays = 30

    @Option(help: "Apple CONSUMPTION_REQUEST notifications (refund requests) on purchases of the Apple apps.")
    var consumptionRequests = 0

    @Option(help: "Google pending refund reviews (chargebacks), published to each Google app's RTDN subscription.")
    var refundReviews = 0

    @Option(
        help:
            "Per Google app: its newest N voids as voidedPurchaseNotifications and N subscriptions as subscriptionNotifications."
    )
    var rtdnNotices = 0

    @Option(help: "A scenario spec JSON file to use instead of the options above.")
    var scenario: String?

    /// The spec these options describe.
    func spec() throws -> ScenarioSpec {
        if let scenario {
            guard let data = FileManager.default.contents(atPath: scenario) else {
                throw ValidationError("cannot read \(scenario)")
            }
            do {
                return try JSONDecoder().decode(ScenarioSpec.self, from: data)
            } catch {
                throw ValidationError("\(scenario) is not a scenario spec: \(error)")
            }
        }
        let anchorMillis: Int64
        if anchor == "now" {
            anchorMillis = SimulatorClock.wallMillis() / 1000 * 1000
        } else if let value = Int64(anchor) {
            anchorMillis = value
        } else {
            throw ValidationError("--anchor: expected milliseconds since 1970 or 'now'")
        }
        guard subscriptions >= 0, (refunds ?? 0) >= 0, (oneTimePurchases ?? 0) >= 0, consumptionRequests >= 0,
            refundReviews >= 0, rtdnNotices >= 0
        else {
            throw ValidationError("counts must not be negative")
        }
        var spec = ScenarioSpec(
            seed: seed, anchorMillis: anchorMillis, subscriptions: subscriptions, oneTimePurchases: oneTimePurchases,
            refunds: refunds, historyDays: historyDays, futureDays: futureDays)
        spec.consumptionRequests = consumptionRequests
        spec.refundReviews = refundReviews
        spec.rtdnNotices = rtdnNotices
        return spec
    }
}
