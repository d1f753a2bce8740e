import Foundation

/// One refund as the ledger holds it, whichever store reported it: a Google voided row, a Google order's refund seen
/// without revocation, or a verified Apple revocation.
///
/// Each store's rows are mapped to records by pure functions (`RefundRecord+Google`, `RefundRecord+Apple`) that
/// return either a record or the reason it cannot be stored (a quarantine entry); ``RefundLedger`` writes records of
/// both stores with one statement, its columns passed as typed arrays. Nothing of a record's meaning travels in a
/// string to be parsed back: its part, kind and amount are typed here and stored in their own columns.
public struct RefundRecord: Sendable, Equatable {
    public typealias Platform = RefundPlatform
    public typealias Kind = RefundKind

    /// Which part of an order a record refunds. Its ``key`` tells two parts of one order apart in the ledger's
    /// natural key `(app, order_id, part_key)`; nothing reads a part back from its key.
    public enum Part: Hashable, Sendable {
        /// The whole order (Apple; Google without `voidedQuantity`).
        case whole
        /// A Google quantity-based partial refund. Whether parts share an `orderId` is undocumented, so each part is
        /// keyed by its void time and quantity and none overwrites another.
        case quantity(voidedMillis: Int64, quantity: Int)
        /// A Google order's `refundEvent`, refunded without revocation (never in the voided list).
        case orderRefund
        /// A Google order's processed partial refund by amount, without revocation; `ordinal` tells apart those
        /// made in the same millisecond (by their place in the order's history).
        case orderPartial(createdMillis: Int64, ordinal: Int = 1)

        public var key: String {
            switch self {
            case .whole: ""
            case .quantity(let millis, let quantity): "\(millis):\(quantity)"
            case .orderRefund: "orders:refund"
            case .orderPartial(let millis, let ordinal):
                ordinal == 1 ? "orders:partial:\(millis)" : "orders:partial:\(millis)#\(ordinal)"
            }
        }

        /// Whether the store revoked what was refunded (the refunds an order shows without revocation take nothing
        /// away from the subscription).
        public var revoked: Bool {
            switch self {
            case .whole, .quantity: true
            case .orderRefund, .orderPartial: false
            }
        }
    }

    /// What the record says about the money.
    public enum Amount: Sendable, Equatable {
        /// The store said what it refunded: `gross` (tax included) and `tax`, integers of `precision` decimal digits
        /// (3: Apple milliunits; 8: an Apple prorated refund; 9: Google Money nanos).
        case stated(gross: Int64, tax: Int64?, precision: Int)
        /// The store says what was refunded is unknown or that no money moved (`note`: `family_revoke`), and the
        /// ledger keeps no amount.
        case none(note: AmountNote?)
        /// The row does not say: estimated from the configured product price until the Orders API says, and never
        /// overwriting what the Orders API stored.
        case estimated
    }

    public var platform: Platform
    /// Apple `transactionId`, Google `orderId`.
    public var orderId: String
    public var part: Part
    /// Apple `originalTransactionId`, Google purchase token: what the refund's subscription is known by.
    public var originalId: String
    public var productId: String?
    public var purchasedAt: Date?
    public var refundedAt: Date
    /// The store's raw reason code (Apple `revocationReason`, Google `voidedReason`), kept when unknown.
    public var reasonCode: Int?
    public var reasonLabel: String
    /// Google `voidedSource` (0 user, 1 developer, 2 Google).
    public var sourceCode: Int?
    public var kind: Kind
    public var quantity: Int
    /// Apple `revocationPercentage` (50000 = 50 %).
    public var percentageMilli: Int?
    /// Apple's signed `price` (milliunits, the total for the quantity).
    public var priceMilli: Int64?
    public var amount: Amount
    public var currency: String?
    public var environment: String?
    public var buyerCountry: String?
    /// Google order `refundReason` (CHARGEBACK, OTHER).
    public var refundReason: String?
    /// The store's JSON of the row, as received (Google) or as verified and decoded (Apple).
    public var payload: Data
    /// The JWS an Apple record was verified from (what a quarantine keeps, so a retry verifies it again).
    public var signed: String?

    /// What the ledger makes of a store's row: the outcome of each store's mapping.
    public enum Intake: Equatable {
        /// A refund to store.
        case refund(RefundRecord)
        /// Not a refund (an Apple transaction without revocation, or ended by an upgrade).
        case notARefund
        /// A row the ledger cannot take, with the reason (naming the field): it goes to the quarantine.
        case unstorable(String)
    }

    /// The record's key within its app.
    public var naturalKey: NaturalKey { NaturalKey(orderId: orderId, partKey: part.key) }

    public struct NaturalKey: Hashable, Sendable {
        public var orderId: String
        public var partKey: String
    }

    /// What a quarantine entry keeps of a record the database refused: the signed form when there is one.
    public var raw: Data { signed.map { Data($0.utf8) } ?? payload }

    /// Whether the record's refund takes anything from its subscription (see ``SubscriptionLedger/applyRefunds(app:storeIds:orderIds:source:runId:on:)``).
    public var revokes: Bool { part.revoked }
}

/// The limits of what the ledger takes, shared by both stores' mappings.
public enum LedgerLimits {
    /// The latest instant stored (`timestamptz` holds more, but reports and status write four-digit years).
    public static let maxMillis: Int64 = 253_402_300_799_999
    /// The longest order or transaction id the ledger takes (Google's are about 24 characters,
    /// `GPA.1234-5678-9012-34567..5`; Apple's are digits).
    public static let maxOrderIdLength = 256
    /// The longest purchase token the ledger takes (Google's are a few hundred characters).
    public static let maxTokenLength = 4096
    /// The longest id, in UTF-8 bytes, kept where it is part of an index's key (a subscription's store id, a queued
    /// recheck's token, a consumption fact's purchase id): a btree entry holds at most 2,704 bytes, and random bytes
    /// do not compress, so a longer one would fail the whole transaction with the database's error, not the line's.
    public static let maxKeyBytes = 2000

    /// Why an id cannot be a key, or `nil` when it can.
    static func oversized(_ field: String, _ value: String, limit: Int = maxOrderIdLength) -> String? {
        value.count > limit ? "\(field): \(value.count) characters, longer than the \(limit) the ledger takes" : nil
    }

    /// The first `\u` escape of `json` that `jsonb` refuses (NUL, or a surrogate without its pair), or `nil`.
    public static func unstorableEscape(in json: Data) -> String? {
        guard contains(UInt8(ascii: "\\"), in: json) else { return nil }
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

    /// Whether `bytes` holds `byte` (`memchr`: every row of every page is scanned, and iterating `Data` byte by byte
    /// cost more than storing the row).
    static func contains(_ byte: UInt8, in bytes: Data) -> Bool {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return false }
            return memchr(base, Int32(byte), raw.count) != nil
        }
    }

    /// An identifier quoted for a log line: escaped, and clipped so a hostile value cannot flood the log.
    public static func quoted(_ value: String?) -> String {
        guard let value else { return "(none)" }
        let clipped = value.count <= 60 ? value : String(value.prefix(57)) + "..."
        return clipped.debugDescription
    }
}
