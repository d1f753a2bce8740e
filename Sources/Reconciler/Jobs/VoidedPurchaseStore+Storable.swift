import Foundation
import PlayDeveloperAPI

extension VoidedPurchaseStore {
    /// The latest instant stored (`timestamptz` holds more, but reports and status write four-digit years).
    static let maxMillis: Int64 = 253_402_300_799_999

    /// The longest `orderId` the ledger takes (Google's are about 24 characters, `GPA.1234-5678-9012-34567..5`).
    static let maxOrderIdLength = 256
    /// The longest purchase token the ledger takes (Google's are a few hundred characters).
    static let maxTokenLength = 4096

    /// A page's rows as the ledger takes them: repeats merged (same natural key: the later row wins), and every
    /// row that cannot be stored (undecodable, a key field missing, an oversized id, a value PostgreSQL cannot
    /// hold) turned into a quarantine entry with its reason.
    static func intake(_ page: VoidedPurchasesListResponse) -> (
        rows: [VoidedPurchase], quarantined: [QuarantinedRow], merged: Int
    ) {
        var quarantined = page.undecodableRows.map { odd in
            QuarantinedRow(
                job: .googleVoided, naturalKey: odd.orderId, raw: odd.rawJSON,
                reason: "row \(odd.index + 1): \(odd.field.map { "\($0): " } ?? "")\(odd.message)")
        }
        var storable: [VoidedPurchase] = []
        storable.reserveCapacity(page.voidedPurchases.count)
        for row in page.voidedPurchases {
            if let reason = unstorableReason(row) {
                quarantined.append(
                    QuarantinedRow(job: .googleVoided, naturalKey: row.orderId, raw: rawJSON(of: row), reason: reason))
            } else {
                storable.append(row)
            }
        }
        let (rows, merged) = storable.mergingRepeats { NaturalKey(orderId: $0.orderId ?? "", partKey: partKey($0)) }
        return (rows, quarantined, merged)
    }

    /// A ledger row's key within its app.
    struct NaturalKey: Hashable {
        var orderId: String
        var partKey: String
    }

    /// The row's JSON as sent, or re-encoded when it was decoded on its own.
    static func rawJSON(of row: VoidedPurchase) -> Data {
        if !row.rawJSON.isEmpty { return row.rawJSON }
        return (try? JSONEncoder.sorted.encode(row)) ?? Data()
    }

    /// Why the ledger cannot take a row as sent, or `nil` when it can. The `orderId` is the ledger's key (and the
    /// Orders API's); text cannot hold NUL, `jsonb` refuses `\u0000` and unpaired surrogate escapes, and times must
    /// lie in 1970 ... 9999.
    static func unstorableReason(_ row: VoidedPurchase) -> String? {
        guard let orderId = row.orderId, !orderId.isEmpty else {
            return "orderId: missing (the ledger's key); purchaseToken \(quoted(row.purchaseToken))"
        }
        if orderId.count > maxOrderIdLength {
            return "orderId: \(orderId.count) characters, longer than the \(maxOrderIdLength) the ledger takes"
        }
        if row.purchaseToken.isEmpty { return "purchaseToken: empty" }
        if row.purchaseToken.count > maxTokenLength {
            return
                "purchaseToken: \(row.purchaseToken.count) characters, longer than the \(maxTokenLength) the ledger takes"
        }
        for (name, value) in [("purchaseToken", row.purchaseToken), ("orderId", row.orderId), ("kind", row.kind)] {
            if let value, value.utf8.contains(0) {
                return "\(name) contains a NUL byte, which PostgreSQL text cannot hold"
            }
        }
        for (name, value) in [
            ("voidedTimeMillis", row.voidedTimeMillis), ("purchaseTimeMillis", row.purchaseTimeMillis),
        ] {
            if let value, !(0...maxMillis).contains(value) { return "\(name) \(value) is not a time from 1970 to 9999" }
        }
        if let escape = unstorableEscape(in: row.rawJSON) {
            return "its JSON holds \(escape), which PostgreSQL jsonb cannot hold"
        }
        return nil
    }

    /// The first `\u` escape of `json` that `jsonb` refuses (NUL, or a surrogate without its pair), or `nil`.
    static func unstorableEscape(in json: Data) -> String? {
        guard json.contains(UInt8(ascii: "\\")) else { return nil }
        let bytes = Array(json)
        var index = 0
        var highSurrogate = false
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count else {
                if highSurrogate { return "an unpaired surrogate escape" }
                index += 1
                continue
            }
            guard bytes[index + 1] == UInt8(ascii: "u"), index + 6 <= bytes.count,
                let value = UInt16(String(decoding: bytes[(index + 2)..<(index + 6)], as: UTF8.self), radix: 16)
            else {
                if highSurrogate { return "an unpaired surrogate escape" }
                index += 2
                continue
            }
            if value == 0 { return "\\u0000" }
            if highSurrogate != (0xDC00...0xDFFF).contains(value) { return "an unpaired surrogate escape" }
            highSurrogate = (0xD800...0xDBFF).contains(value)
            index += 6
        }
        return highSurrogate ? "an unpaired surrogate escape" : nil
    }

    /// An identifier quoted for a log line: escaped, and clipped so a hostile value cannot flood the log.
    static func quoted(_ value: String?) -> String {
        guard let value else { return "(none)" }
        let clipped = value.count <= 60 ? value : String(value.prefix(57)) + "..."
        return clipped.debugDescription
    }
}
