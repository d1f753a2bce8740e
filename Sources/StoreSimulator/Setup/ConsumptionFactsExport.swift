import Foundation

/// What an app backend knows about the purchases a scenario's refund requests name, as the CSV that
/// `storerecon import consumption` reads (`platform,purchase_id,customer_consented,delivery_status,
/// consumption_percent,sample_content_provided,as_of`): one row per Apple `CONSUMPTION_REQUEST` (its transaction
/// id) and per Google pending refund review (its order id), every customer consenting, so that every request the
/// stores can take an answer for gets one.
public enum ConsumptionFactsExport {
    /// The CSV header.
    public static let header =
        "platform,purchase_id,customer_consented,delivery_status,consumption_percent,sample_content_provided,as_of"

    /// Writes the facts of every refund request of `spec` to `url`.
    /// - Returns: the number of rows written.
    @discardableResult
    public static func write(_ spec: ScenarioSpec, to url: URL) throws -> Int {
        let lines = try rows(ScenarioGenerator(spec: spec).generate())
        try Data(([header] + lines).map { $0 + "\n" }.joined().utf8).write(to: url)
        return lines.count
    }

    /// One line per request, Apple apps' first, then Google's, in the scenario's order.
    static func rows(_ scenario: Scenario) -> [String] {
        let asOf = TimeFormat.rfc3339(millis: scenario.spec.anchorMillis - 86_400_000)
        var purchases: [(platform: String, id: String)] = []
        for app in scenario.spec.apps.indices where scenario.spec.apps[app].platform == .apple {
            for event in scenario.notifications[Scenario.notificationSlot(app: app, sandbox: false)]
            where event.kind == .consumptionRequest {
                let id = scenario.transactionId(plan: Int(event.plan), charge: Int(event.charge))
                purchases.append(("apple", String(id)))
            }
        }
        for app in scenario.spec.apps.indices where scenario.spec.apps[app].platform == .google {
            for message in scenario.rtdnMessages(app: app) {
                if let orderId = message.orderId { purchases.append(("google", orderId)) }
            }
        }
        return purchases.enumerated().map { position, purchase in
            "\(purchase.platform),\(purchase.id),true,\(facts(position)),\(asOf)"
        }
    }

    /// The delivery, consumption and sample columns of the `position`th row: a fifth undelivered, the rest
    /// delivered with 0 to 99.5 % consumed.
    static func facts(_ position: Int) -> String {
        if position % 5 == 4 { return "undelivered_other,,true" }
        let milli = (position * 7_919) % 200 * 500
        let percent = milli % 1000 == 0 ? "\(milli / 1000)" : "\(milli / 1000).5"
        return "delivered,\(percent),\(position % 2 == 0 ? "true" : "false")"
    }
}
