import Foundation

/// `PUT /inApps/v2/transactions/consumption/{transactionId}`: Send Consumption Information v2. `202 Accepted` with no
/// body, or `400` with the error Apple documents for the body's first fault: `customerConsented` not `true`
/// (InvalidCustomerConsentedError 4000035), a bad `deliveryStatus` (4000036) or `sampleContentProvided` (4000041),
/// a family-shared transaction (FamilyTransactionNotSupportedError 4000185), and, with code 4000000 and the error's
/// name as the message (their codes are not published), ConsumptionPercentageOutOfRangeError,
/// UndeliveredConsumptionPercentageNonZeroError, ConsumptionPercentageAutoRenewableSubscriptionError and a
/// `GRANT_PRORATED` without a percentage above 0 on a one-time purchase.
/// https://developer.apple.com/documentation/appstoreserverapi/send-consumption-information
struct ConsumptionEndpoint {
    static let deliveryStatuses: Set<String> = [
        "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
        "UNDELIVERED_OTHER",
    ]
    static let preferences: Set<String> = ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]

    let state: SimulatorState

    func handle(_ request: StoreRequest, app: Int, sandbox: Bool, transactionId: String) -> StoreReply {
        let plan: Int
        switch AppleCustomerLookup(state: state).find(transactionId, app: app, sandbox: sandbox) {
        case .failed(let reply): return reply
        case .found(let found): plan = found
        }
        let scenario = state.scenario
        let purchase = scenario.plans[plan]
        let charge = scenario.appleTransaction(transactionId)?.charge ?? 0
        guard let body = try? JSONDecoder().decode([String: JSONScalar].self, from: request.body) else {
            return AppleError.badRequest()
        }
        let familyShared = purchase.flags.contains(.familyShared)
        if let refusal = refusal(body, autoRenewable: !purchase.isOneTime, familyShared: familyShared) {
            return refusal
        }
        state.consumption.record(
            ConsumptionAnswer(
                app: scenario.spec.apps[app].id, transactionId: transactionId,
                body: String(decoding: request.body, as: UTF8.self), calls: 1, millis: state.now, plan: Int32(plan),
                charge: UInt16(charge), preference: body["refundPreference"]?.string,
                consumption: body["consumptionPercentage"].flatMap {
                    if case .integer(let value) = $0 { value } else { nil }
                }))
        return StoreReply(status: 202, body: "", contentType: "text/plain")
    }

    /// The documented refusal of a body, or nil when Apple takes it.
    func refusal(_ body: [String: JSONScalar], autoRenewable: Bool, familyShared: Bool) -> StoreReply? {
        func invalid(_ name: String) -> StoreReply { AppleError.reply(400, 4_000_000, name) }
        guard body["customerConsented"] == .bool(true) else {
            return AppleError.reply(400, 4_000_035, "Invalid request. The customer consented field is invalid.")
        }
        guard let delivery = body["deliveryStatus"]?.string, Self.deliveryStatuses.contains(delivery) else {
            return AppleError.reply(400, 4_000_036, "Invalid request. The delivery status field is invalid.")
        }
        guard case .bool = body["sampleContentProvided"] else {
            return AppleError.reply(400, 4_000_041, "Invalid request. The sample content provided field is invalid.")
        }
        if familyShared {
            return AppleError.reply(400, 4_000_185, "Invalid request. Family Sharing transactions aren't supported.")
        }
        let preference = body["refundPreference"]
        if let preference, !(preference.string.map(Self.preferences.contains) ?? false) {
            return invalid("InvalidRefundPreferenceError")
        }
        let prorated = preference?.string == "GRANT_PRORATED"
        guard let raw = body["consumptionPercentage"] else {
            return !autoRenewable && prorated ? invalid("GRANT_PRORATED needs a consumptionPercentage above 0") : nil
        }
        if autoRenewable { return invalid("ConsumptionPercentageAutoRenewableSubscriptionError") }
        guard case .integer(let percentage) = raw, (0...100_000).contains(percentage) else {
            return invalid("ConsumptionPercentageOutOfRangeError")
        }
        if delivery != "DELIVERED", percentage != 0 { return invalid("UndeliveredConsumptionPercentageNonZeroError") }
        if prorated, percentage == 0 { return invalid("GRANT_PRORATED needs a consumptionPercentage above 0") }
        return nil
    }
}

/// One JSON value of a request body, typed as JSON types it (a `0` is not `false`).
enum JSONScalar: Decodable, Equatable {
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .other
        }
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}
