import Foundation
import PlayDeveloperAPI

extension VoidedPurchaseStore {
    /// The latest instant stored (`timestamptz` holds more, but reports and status write four-digit years).
    static let maxMillis: Int64 = 253_402_300_799_999

    /// Why PostgreSQL cannot store a row as sent, or `nil` when it can. Text cannot hold NUL, `jsonb` refuses
    /// `\u0000` and unpaired surrogate escapes, and times must lie in 1970 ... 9999. One such row would otherwise
    /// fail its whole page on every run.
    static func unstorableReason(_ row: VoidedPurchase) -> String? {
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
