import Foundation
import Postgres

extension RefundRequestReport {
    /// The money one request moved: what the store refunded for its purchase (the ledger's refunds of that
    /// transaction or order, reversals left out), or what the developer kept when the store declined (the price,
    /// when the ledger or the Google order knows it).
    public struct RequestMoney: Sendable, Equatable {
        /// Whether the money was refunded or kept.
        public enum Kind: String, Sendable { case refunded, kept }

        public var kind: Kind
        /// ISO 4217, upper case; `nil` when unknown.
        public var currency: String?
        /// Exact nanos rounded to the currency's minor unit; `nil` when unknown (never 0 for unknown).
        public var nanos: Decimal?
        /// The app's Apple test environment (`sandbox`, ...), `nil` for production: test money is summed apart.
        public var testEnvironment: String?
    }

    /// Money refunded and kept in one currency (`unknown` when the currency is not known).
    public struct MoneyLine: Sendable, Equatable, Codable {
        public var currency: String
        /// An Apple test environment whose money this line sums (with `--environment sandbox|all`); `nil`: production.
        public var environment: String? = nil
        /// The sum of the known amounts refunded, in the currency's units; requests refunded at an unknown amount.
        public var refunded: String
        public var refundedUnknown: Int
        /// The sum of the known prices kept, in the currency's units; declined requests at an unknown price.
        public var kept: String
        public var keptUnknown: Int

        /// Creates a line.
        public init(currency: String, refunded: String, refundedUnknown: Int, kept: String, keptUnknown: Int) {
            self.currency = currency
            self.refunded = refunded
            self.refundedUnknown = refundedUnknown
            self.kept = kept
            self.keptUnknown = keptUnknown
        }
    }

    /// The SQL of each request's money, keyed by `refund_request.id`, for the requests received in `[$1, $2)`: the
    /// ledger's refunds of its transaction or order made since it came and before the next request about it (one
    /// refund is one request's outcome), each rounded to its currency's minor unit (`$3`, `$4`: the exponents) and
    /// added, when every one has the store's amount in one currency; and the purchase's price (stored with the
    /// request: Apple's signed transaction, Google's order; else the ledger's `google_order`). `$5`: the apps'
    /// environment (``RefundRequestReport/environmentFilter(_:parameter:)``).
    static let moneyQuery = """
        SELECT q.id, r.refunds, r.currency AS refund_currency, trunc(r.nanos)::text AS refund_nanos, r.estimated,
               q.decision, q.revocation_type,
               CASE WHEN q.price_nanos IS NOT NULL THEN upper(q.currency) ELSE upper(g.currency) END AS price_currency,
               coalesce(q.price_nanos, g.total_nanos)::text AS price_nanos, q.revocation_milli,
               EXISTS (SELECT 1 FROM refund f WHERE f.app_id = q.app_id AND f.order_id = q.transaction_id
                       AND f.reversed_at IS NOT NULL) AS reversed,
               lower(a.environment) AS app_environment
        FROM refund_request q
        JOIN app a ON a.id = q.app_id
        LEFT JOIN LATERAL (
            SELECT count(*)::int AS refunds,
                   CASE WHEN count(DISTINCT upper(f.currency)) = 1 THEN max(upper(f.currency)) END AS currency,
                   CASE WHEN count(*) = count(f.gross_amount) AND count(*) = count(f.currency)
                             AND count(DISTINCT upper(f.currency)) = 1 AND bool_and(f.amount_source = 'store')
                        THEN sum(report_round_half_even(
                            f.gross_amount::numeric * 10::numeric ^ (9 - f.amount_precision), coalesce(m.exponent, 9)))
                   END AS nanos,
                   coalesce(bool_and(f.amount_source = 'configured'), false) AS estimated
            FROM refund f
            LEFT JOIN unnest($3::text[], $4::int[]) AS m(currency, exponent) ON m.currency = upper(f.currency)
            WHERE f.app_id = q.app_id AND f.order_id = q.transaction_id AND f.reversed_at IS NULL
              AND f.amount_note IS DISTINCT FROM 'family_revoke' AND f.refunded_at >= q.received_at
              AND NOT EXISTS (
                  SELECT 1 FROM refund_request later
                  WHERE later.app_id = q.app_id AND later.transaction_id = q.transaction_id
                    AND later.received_at > q.received_at AND later.received_at <= f.refunded_at)
        ) r ON true
        LEFT JOIN google_order g
            ON q.store = 'google' AND g.app_id = q.app_id AND g.order_id = q.transaction_id AND g.status = 'ok'
        WHERE q.received_at >= $1 AND q.received_at < $2
            \(RefundRequestReport.environmentFilter("lower(a.environment)", parameter: 5))
        """

    /// The money of each request received in `[from, to)` that moved or kept any, by `refund_request.id`. Refunded
    /// (decided so, or undecided with refunds in the ledger since it came): what the ledger refunded of its purchase
    /// since the request (``moneyQuery``) when the store stated every amount, unknown when it has not stated one yet;
    /// with no refund in the ledger (or only configured estimates, never summed here), unless the ledger has a
    /// reversed refund of it, the price times Apple's revocation percentage (unknown for a prorated refund without
    /// one). Declined: the price kept, whatever was refunded after the review.
    public static func money(
        from: Date, to: Date, environment: RefundReportOptions.EnvironmentFilter = .production,
        on connection: PostgresConnection
    ) throws -> [Int64: RequestMoney] {
        var result: [Int64: RequestMoney] = [:]
        let parameters: [any PostgresEncodable] =
            [from, to] + RefundReport.roundingParameters + [environment.rawValue]
        for row in try connection.query(moneyQuery, parameters) {
            let id = try row.decode("id", as: Int64.self)
            let environment = try row.decode("app_environment", as: String.self)
            defer { if environment != "production" { result[id]?.testEnvironment = environment } }
            let decision = try row.decodeIfPresent("decision", as: String.self)
            let priceCurrency = try row.decodeIfPresent("price_currency", as: String.self)
            let price = try row.decodeIfPresent("price_nanos", as: String.self)
            if decision == "declined" {
                result[id] = money(.kept, priceCurrency, price)
                continue
            }
            let refunds = try row.decode("refunds", as: Int.self)
            // Undecided (Google's review not over yet): the ledger's refunds since the request are its outcome.
            guard decision == "refunded" || (decision ?? "pending" == "pending" && refunds > 0) else { continue }
            let refunded = try row.decodeIfPresent("refund_nanos", as: String.self)
            let refundCurrency = try row.decodeIfPresent("refund_currency", as: String.self)
            if refunds > 0, refunded != nil {
                result[id] = money(.refunded, refundCurrency, refunded)
            } else if refunds > 0, !(try row.decode("estimated", as: Bool.self)) {
                // The ledger has the refund, its amount not known yet (pending at Google, a prorated share unknown).
                result[id] = RequestMoney(kind: .refunded, currency: refundCurrency ?? priceCurrency)
            } else if !(try row.decode("reversed", as: Bool.self)) {
                // The price, when known, in its currency; else an unknown amount in the ledger's currency.
                let currency = price == nil ? refundCurrency ?? priceCurrency : priceCurrency
                let type = try row.decodeIfPresent("revocation_type", as: String.self)
                switch (type, try row.decodeIfPresent("revocation_milli", as: Int.self)) {
                case ("FAMILY_REVOKE", _): continue
                case ("REFUND_PRORATED", nil): result[id] = RequestMoney(kind: .refunded, currency: currency)
                case (_, let share): result[id] = money(.refunded, currency, price, share: share ?? 100_000)
                }
            }
        }
        return result
    }

    /// One request's money: `nanos` (times `share` milliunits of 100000) rounded to the currency's minor unit.
    static func money(_ kind: RequestMoney.Kind, _ currency: String?, _ nanos: String?, share: Int = 100_000)
        -> RequestMoney
    {
        guard let currency, let exact = nanos.flatMap(Money.nanos(text:)) else {
            return RequestMoney(kind: kind, currency: currency, nanos: nil)
        }
        let scaled = share == 100_000 ? exact : exact * Decimal(share) / 100_000
        return RequestMoney(kind: kind, currency: currency, nanos: Money.rounded(nanos: scaled, currency: currency))
    }

    /// Per currency, the sums of `money` (each request already rounded, so a line is the sum of the detail rows); a
    /// sum of which every amount is unknown is empty, never 0.
    public static func moneyLines(_ money: some Collection<RequestMoney>) -> [MoneyLine] {
        var sums: [[String]: MoneySum] = [:]
        for item in money {
            let key = [item.currency ?? "unknown", item.testEnvironment ?? ""]
            let side = item.kind == .refunded ? 0 : 1
            var sum = sums[key] ?? MoneySum()
            if let nanos = item.nanos {
                sum.known[side] += nanos
                sum.counted[side] += 1
            } else {
                sum.unknown[side] += 1
            }
            sums[key] = sum
        }
        return sums.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { key in
            let (currency, sum) = (key[0], sums[key]!)
            let text = { (side: Int) in
                sum.counted[side] == 0 && sum.unknown[side] > 0
                    ? "" : Money.format(nanos: sum.known[side], currency: currency)
            }
            var line = MoneyLine(
                currency: currency, refunded: text(0), refundedUnknown: sum.unknown[0], kept: text(1),
                keptUnknown: sum.unknown[1])
            line.environment = key[1].isEmpty ? nil : key[1]
            return line
        }
    }

    /// One currency's sums, refunded [0] and kept [1]: the known amounts, how many, and how many unknown.
    private struct MoneySum {
        var known = [Decimal](repeating: 0, count: 2)
        var counted = [0, 0]
        var unknown = [0, 0]
    }

    /// The columns of the money lines.
    public static let moneyColumns = ["currency", "refunded", "refunded_unknown", "kept", "kept_unknown"]

    /// The money lines as rows of ``moneyColumns``.
    static func moneyRows(_ lines: [MoneyLine]) -> [[String]] {
        lines.map { line in
            [
                line.currency + (line.environment.map { " (\($0))" } ?? ""), line.refunded,
                String(line.refundedUnknown), line.kept, String(line.keptUnknown),
            ]
        }
    }

    /// A detail row's money cells: currency, refunded, kept (empty when not applicable, `unknown` when unknown).
    static func moneyCells(_ money: RequestMoney?) -> [String] {
        guard let money else { return ["", "", ""] }
        let amount = money.nanos.map { Money.format(nanos: $0, currency: money.currency ?? "") } ?? "unknown"
        return [money.currency ?? "unknown"] + (money.kind == .refunded ? [amount, ""] : ["", amount])
    }
}
