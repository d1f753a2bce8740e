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
        // Customers with several purchases (ScenarioSpec.appleCustomerPlans) are named by a user_ref, as a backend
        // knows its own users.
        let userRefs = spec.appleCustomerPlans > 1
        var text = "app,store_id,product_id,expires_at" + (userRefs ? ",user_ref\n" : "\n")
        var rows = 0
        for index in 0..<spec.subscriptions {
            guard let truth = scenario.subscriptionTruth(plan: index, at: spec.anchorMillis) else { continue }
            let expires = truth.expiresMillis.map { TimeFormat.rfc3339(millis: $0) } ?? ""
            text += "\(truth.app),\(truth.storeId),\(truth.productId),\(expires)"
            if userRefs {
                text +=
                    truth.platform == "apple" ? ",user-\(scenario.customerPlans(of: index).first ?? index)\n" : ",\n"
            }
            if !userRefs { text += "\n" }
            rows += 1
        }
        try Data(text.utf8).write(to: url)
        return rows
    }
}
