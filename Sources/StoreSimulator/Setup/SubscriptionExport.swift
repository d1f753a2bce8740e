import Foundation

/// What an app backend knows about a scenario's subscriptions at its anchor time, as the CSV that
/// `storerecon import subscriptions` reads (`app,store_id,product_id,expires_at`): the demo and benchmarks load it
/// the way an operator would load their backend's export.
public enum SubscriptionExport {
    /// Writes the CSV of every subscription known at the anchor to `url`.
    /// - Returns: the number of rows written.
    @discardableResult
    public static func write(_ spec: ScenarioSpec, to url: URL) throws -> Int {
        let scenario = try ScenarioGenerator(spec: spec).generate()
        var text = "app,store_id,product_id,expires_at\n"
        var rows = 0
        for truth in scenario.subscriptionTruth(at: spec.anchorMillis, offset: 0, limit: Int.max) {
            let expires = truth.expiresMillis.map { TimeFormat.rfc3339(millis: $0) } ?? ""
            text += "\(truth.app),\(truth.storeId),\(truth.productId),\(expires)\n"
            rows += 1
        }
        try Data(text.utf8).write(to: url)
        return rows
    }
}
