import Foundation
import PlayDeveloperAPI
import Postgres

/// Google's voided rows as ledger records (``intake(_:receivedAt:)``); an order's refunds without revocation come from
/// ``GoogleOrderPricing``. Pure: no database, no store call.
extension RefundRecord {
    /// A page's rows as the ledger takes them: repeats merged (same natural key: the later row wins), and every row
    /// that cannot be stored (undecodable, a key field missing, an oversized id, a value PostgreSQL cannot hold)
    /// turned into a quarantine entry with its reason.
    public static func intake(_ page: VoidedPurchasesListResponse, receivedAt: Date = Date()) -> (
        records: [RefundRecord], quarantined: [QuarantinedRow], merged: Int
    ) {
        var quarantined = page.undecodableRows.map { odd in
            QuarantinedRow(
                job: .googleVoided, naturalKey: odd.orderId, raw: odd.rawJSON,
                reason: "row \(odd.index + 1): \(odd.field.map { "\($0): " } ?? "")\(odd.message)")
        }
        var records: [RefundRecord] = []
        records.reserveCapacity(page.voidedPurchases.count)
        for row in page.voidedPurchases {
            switch voided(row, receivedAt: receivedAt) {
            case .refund(let record): records.append(record)
            case .notARefund: break
            case .unstorable(let reason):
                quarantined.append(
                    QuarantinedRow(job: .googleVoided, naturalKey: row.orderId, raw: rawJSON(of: row), reason: reason))
            }
        }
        let (merged, repeats) = records.mergingRepeats { $0.naturalKey }
        return (merged, quarantined, repeats)
    }

    /// A voided row as a record, or why it cannot be stored (`receivedAt`: when the page came, for times in the
    /// future).
    public static func voided(_ row: VoidedPurchase, receivedAt: Date = Date()) -> Intake {
        if let reason = unstorableReason(row) ?? impossibleReason(row, receivedAt: receivedAt) {
            return .unstorable(reason)
        }
        guard let orderId = row.orderId else { return .unstorable("orderId: missing") }
        let part = row.voidedQuantity.map { Part.quantity(voidedMillis: row.voidedTimeMillis, quantity: Int($0)) }
        return .refund(
            RefundRecord(
                platform: .google, orderId: orderId, part: part ?? .whole, originalId: row.purchaseToken,
                purchasedAt: row.purchaseTimeMillis.map(date(millis:)), refundedAt: date(millis: row.voidedTimeMillis),
                reasonCode: row.voidedReason?.code.map(Int.init), reasonLabel: row.voidedReason?.label ?? "unknown",
                sourceCode: row.voidedSource?.code.map(Int.init), kind: part == nil ? .full : .partialQuantity,
                quantity: Int(row.voidedQuantity ?? 1), amount: .estimated, payload: rawJSON(of: row)))
    }

    /// The row's JSON as sent, or re-encoded when it was decoded on its own.
    static func rawJSON(of row: VoidedPurchase) -> Data {
        if !row.rawJSON.isEmpty { return row.rawJSON }
        return (try? JSONEncoder.sorted.encode(row)) ?? Data()
    }

    /// Why the ledger cannot take a voided row as sent, or `nil` when it can. The `orderId` is the ledger's key (and
    /// the Orders API's); text cannot hold NUL, `jsonb` refuses `\u0000` and unpaired surrogate escapes, and times
    /// must lie in 1970 ... 9999.
    static func unstorableReason(_ row: VoidedPurchase) -> String? {
        guard let orderId = row.orderId, !orderId.isEmpty else {
            return "orderId: missing (the ledger's key); purchaseToken \(LedgerLimits.quoted(row.purchaseToken))"
        }
        if let oversized = LedgerLimits.oversized("orderId", orderId) { return oversized }
        if row.purchaseToken.isEmpty { return "purchaseToken: empty" }
        if let oversized = LedgerLimits.oversized(
            "purchaseToken", row.purchaseToken, limit: LedgerLimits.maxTokenLength)
        {
            return oversized
        }
        for (name, value) in [("purchaseToken", row.purchaseToken), ("orderId", row.orderId), ("kind", row.kind)] {
            if let value, PostgresConnection.containsNUL(value) {
                return "\(name) contains a NUL byte, which PostgreSQL text cannot hold"
            }
        }
        for (name, value) in [
            ("voidedTimeMillis", row.voidedTimeMillis), ("purchaseTimeMillis", row.purchaseTimeMillis),
        ] {
            if let value, !(0...LedgerLimits.maxMillis).contains(value) {
                return "\(name) \(value) is not a time from 1970 to 9999"
            }
        }
        if let escape = LedgerLimits.unstorableEscape(in: row.rawJSON) {
            return "its JSON holds \(escape), which PostgreSQL jsonb cannot hold"
        }
        return nil
    }

    /// How far ahead of this host's clock a store's time may be (clock skew) before it is impossible.
    public static let clockSkew: Int64 = 10 * 60_000

    /// Why a voided row's values cannot be true, or `nil`: a quantity that is not a positive number of units, a void
    /// before the purchase, or a time in the future beyond clock skew.
    static func impossibleReason(_ row: VoidedPurchase, receivedAt: Date) -> String? {
        // Rendered only for a row refused (the quoting costs more than the checks).
        var key: String { "order \(LedgerLimits.quoted(row.orderId))" }
        if let units = row.voidedQuantity, units <= 0 {
            return "voidedQuantity: \(units) is not a number of units refunded (\(key))"
        }
        if let purchased = row.purchaseTimeMillis, row.voidedTimeMillis < purchased {
            return "voidedTimeMillis: \(row.voidedTimeMillis) is before purchaseTimeMillis \(purchased) (\(key))"
        }
        let now = Int64((receivedAt.timeIntervalSince1970 * 1000).rounded())
        for (name, value) in [
            ("voidedTimeMillis", row.voidedTimeMillis), ("purchaseTimeMillis", row.purchaseTimeMillis),
        ] {
            if let value, value > now + clockSkew {
                return "\(name): \(value) is in the future (\(key))"
            }
        }
        return nil
    }

    static func date(millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
