/// Odd data on purpose: the real stores repeat rows (Google's voided listing is built from an event log), send
/// values newer than a client knows, leave out optional fields, and now and then a row no ledger can take. With
/// ``SimulatorOptions/oddRows`` above zero, about that fraction of refund rows is answered oddly, each refund always
/// the same way (the choice is a pure function of its index, so test oracles can name the odd rows).
public enum OddRow: String, Sendable, CaseIterable, Codable {
    /// Google: the row is written twice in its page. Apple: the transaction (and the notification) twice.
    case repeated
    /// Google: `voidedReason` 97 and `voidedSource` 9, codes no client knows yet. Stored, labelled unknown.
    case unknownCodes
    /// Google: no `kind` and no `purchaseTimeMillis` (both optional). Stored.
    case missingOptional
    /// Google: no `orderId`, the ledger's key. Quarantined.
    case noOrderId
    /// Google: `purchaseToken` as a JSON number. Quarantined.
    case wrongType
    /// Google: a 500-character `orderId`, longer than a ledger takes. Quarantined.
    case oversizedId

    /// Whether a ledger cannot take a row answered this way (it belongs in the quarantine).
    public var isUnstorable: Bool {
        switch self {
        case .noOrderId, .wrongType, .oversizedId: return true
        case .repeated, .unknownCodes, .missingOptional: return false
        }
    }

    /// How refund `index` is answered when a `rate` of rows is odd, or nil when it is answered plainly.
    public static func kind(ofRefund index: Int32, rate: Double) -> OddRow? {
        guard rate > 0 else { return nil }
        // A fixed mix of the index's bits (splitmix64's finaliser): spread, repeatable, independent of the seed.
        var z = UInt64(bitPattern: Int64(index)) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let unit = Double(z >> 11) / Double(UInt64(1) << 53)
        guard unit < rate else { return nil }
        return allCases[Int(z % UInt64(allCases.count))]
    }

    /// The 500-character order id of an ``oversizedId`` row.
    public static func oversizedOrderId(_ orderId: String) -> String {
        orderId + String(repeating: "9", count: max(0, 500 - orderId.count))
    }
}
