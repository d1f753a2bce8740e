import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// Two nights as cron runs them: `run nightly` while the store's clock is a day behind the host's, then the store's
/// clock advanced the day and `run nightly` again, then `report refunds` against the scenario's truth, grouped the
/// same way, with exact amounts: each refund rounded to its currency's minor unit, then added; a reversal a negative
/// entry on the day of the reversal.
///
/// storerecon reads the host's clock, so on the first night its Google window ends `sync.googleSkew` (a day and two
/// minutes) back, where the store's "now" is, and on the second night `sync.appleOverlap` (two days) re-reads the
/// notifications of the day the store had not reached yet.
@Suite("Two nightly runs a day apart, and the refund report against the truth")
struct TwoNightsReportTests {
    static let day: Int64 = 86_400_000

    /// The simulator follows the wall clock a day late; signatures and quotas are checked on the wall clock.
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                seed: 43, anchorMillis: now, subscriptions: 3000, oneTimePurchases: 800, refunds: 600,
                historyDays: 25, futureDays: 3, sandboxShare: 0))
        options.clock = .realTime(offsetMillis: -day)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        options.quotas.appleRefundHistoryPerSecond = 1000
        return options
    }

    struct Group: Hashable, CustomStringConvertible {
        var day: String
        var platform: String
        var currency: String
        var source: String
        var refunds = 0
        var quantity = 0
        /// Sum of the entries, each rounded to the currency's minor unit by ``rounded(_:_:)``, while the truth is
        /// added up.
        var amountNanos: Int64 = 0
        var taxNanos: Int64 = 0
        var taxKnown = true
        /// The gross and tax as the report prints them (minor units), or nil when not known.
        var gross: String?
        var tax: String?
        var unknownAmount = 0
        var familyRevokes = 0
        var reversed = 0
        /// Google refunds made without revocation (of `refunds`).
        var notRevoked = 0
        var description: String {
            "\(day) \(platform) \(currency) \(source): \(refunds) refunds, \(quantity) units, gross \(gross ?? "-"), tax \(tax ?? "-"), "
                + "\(unknownAmount) unknown, \(familyRevokes) family, \(reversed) reversed"
        }
    }

    /// ISO 4217 minor units of the scenario's currencies (written out here, not taken from storerecon's table).
    static let minorUnits = ["USD": 2, "EUR": 2, "JPY": 0, "GBP": 2, "KWD": 3, "INR": 2]

    /// Exact nanos (not negative) rounded half to even to `currency`'s minor unit, still in nanos.
    static func rounded(_ nanos: Int64, _ currency: String) -> Int64 {
        let exponent = minorUnits[currency] ?? 2
        var step: Int64 = 1
        for _ in 0..<(9 - exponent) { step *= 10 }
        var (whole, remainder) = nanos.quotientAndRemainder(dividingBy: step)
        if remainder * 2 > step || (remainder * 2 == step && whole % 2 != 0) { whole += 1 }
        return whole * step
    }

    /// Nanos already rounded to `currency`'s minor unit, as decimal text.
    static func text(_ nanos: Int64, _ currency: String) -> String {
        let exponent = minorUnits[currency] ?? 2
        var step: Int64 = 1
        for _ in 0..<(9 - exponent) { step *= 10 }
        let whole = nanos.magnitude / UInt64(step)
        let sign = nanos < 0 ? "-" : ""
        guard exponent > 0 else { return sign + String(whole) }
        var digits = String(whole)
        if digits.count <= exponent { digits = String(repeating: "0", count: exponent - digits.count + 1) + digits }
        digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -exponent))
        return sign + digits
    }

    static func utcDay(_ millis: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    /// The truth grouped by day and platform (and currency), up to what the stored checkpoints say was read.
    static func expected(
        _ simulator: StoreSimulator, knownTokens: Set<String>, googleUpTo: Int64, googleFrom: Int64, appleUpTo: Int64,
        askedOrders: [String: Int64] = [:]
    ) -> Set<Group> {
        let truth = simulator.groundTruth()
        var groups: [String: Group] = [:]
        var known: Set<String> = []
        func add(
            day: String, platform: String, currency: String, source: String, quantity: Int, nanos: Int64?,
            tax: Int64? = nil, reversal: Bool = false, family: Bool = false, notRevoked: Bool = false
        ) {
            let key = "\(day)|\(platform)|\(currency)|\(source)"
            var group = groups[key] ?? Group(day: day, platform: platform, currency: currency, source: source)
            if reversal {
                // A negative entry: the refund's units and amount back out (a family revoke moved none).
                group.reversed += 1
                if !family {
                    group.quantity -= quantity
                    if let nanos {
                        group.amountNanos -= rounded(nanos, currency)
                        group.taxKnown = false
                        known.insert(key)
                    } else {
                        group.unknownAmount += 1
                    }
                }
            } else if family {
                group.familyRevokes += 1
            } else {
                group.refunds += 1
                group.quantity += quantity
                if notRevoked { group.notRevoked += 1 }
                if let nanos {
                    group.amountNanos += rounded(nanos, currency)
                    if let tax { group.taxNanos += rounded(tax, currency) } else { group.taxKnown = false }
                    known.insert(key)
                } else {
                    group.unknownAmount += 1
                }
            }
            groups[key] = group
        }
        for refund in truth.appleRefunds where refund.revocationDate <= appleUpTo {
            // From the scenario's facts: the unit price times the units bought, times the refunded share (exact in
            // nanos: milliunits x 10^6, milli-percent / 10^5); a family revoke moves no money.
            let total = refund.unitPriceMilli * Int64(refund.quantity) * 1_000_000
            let family = refund.revocationType == "FAMILY_REVOKE"
            let nanos =
                refund.revocationType == "REFUND_PRORATED"
                ? total / 100_000 * Int64(refund.revocationPercentage ?? 100_000) : total
            add(
                day: utcDay(refund.revocationDate), platform: "apple", currency: refund.currency,
                source: family ? "none" : "store", quantity: refund.quantity, nanos: family ? nil : nanos,
                family: family)
            if let reversed = refund.reversedDate, reversed <= appleUpTo {
                add(
                    day: utcDay(reversed), platform: "apple", currency: refund.currency,
                    source: family ? "none" : "store", quantity: refund.quantity, nanos: family ? nil : nanos,
                    reversal: true, family: family)
            }
        }
        // Google: what the Orders API says was refunded, from the scenario's facts: the buyer region's unit price
        // and tax times the units refunded (a part's own units; a whole-order void, what the parts left).
        let parts = Dictionary(grouping: truth.googleVoids.filter { $0.voidedQuantity != nil }, by: \.orderId)
        for void in truth.googleVoids
        where void.recorded && void.recordedTimeMillis >= googleFrom && void.recordedTimeMillis <= googleUpTo {
            let earlierParts = (parts[void.orderId] ?? []).filter { $0.voidedTimeMillis <= void.voidedTimeMillis }
            let units = void.voidedQuantity ?? (void.orderQuantity - earlierParts.reduce(0) { $0 + $1.voidedQuantity! })
            add(
                day: utcDay(void.voidedTimeMillis), platform: "google", currency: void.currency, source: "store",
                quantity: units, nanos: void.unitPriceNanos * Int64(units), tax: void.unitTaxNanos * Int64(units))
        }
        // Refunds Google made without revoking, of the orders storerecon re-read (when it last read them): the whole
        // order's regional price and tax.
        for refund in truth.googleRefundsWithoutRevocation {
            guard let asked = askedOrders[refund.orderId], refund.refundMillis <= asked else { continue }
            add(
                day: utcDay(refund.refundMillis), platform: "google", currency: refund.currency, source: "store",
                quantity: 1, nanos: refund.totalNanos, tax: refund.taxNanos, notRevoked: true)
        }
        // A void the voided list has not shown yet (recorded late) is, in the order, a refund like those: seen when
        // the order is re-read, until the voided list shows it.
        let listed = Set(
            truth.googleVoids.filter {
                $0.recorded && $0.recordedTimeMillis >= googleFrom && $0.recordedTimeMillis <= googleUpTo
            }.map(\.orderId))
        for void in truth.googleVoids where void.voidedQuantity == nil && !listed.contains(void.orderId) {
            guard let asked = askedOrders[void.orderId], void.voidedTimeMillis <= asked else { continue }
            add(
                day: utcDay(void.voidedTimeMillis), platform: "google", currency: void.currency, source: "store",
                quantity: 1, nanos: void.unitPriceNanos * Int64(void.orderQuantity),
                tax: void.unitTaxNanos * Int64(void.orderQuantity), notRevoked: true)
        }
        return Set(
            groups.map { key, group in
                var group = group
                group.gross = known.contains(key) ? text(group.amountNanos, group.currency) : nil
                group.tax = known.contains(key) && group.taxKnown ? text(group.taxNanos, group.currency) : nil
                group.amountNanos = 0
                group.taxNanos = 0
                group.taxKnown = true
                return group
            })
    }

    static func reported(_ json: String) throws -> Set<Group> {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let rows = try #require(object["groups"] as? [[String: Any]])
        return Set(
            rows.map { row in
                Group(
                    day: row["day"] as? String ?? "", platform: row["platform"] as? String ?? "",
                    currency: row["currency"] as? String ?? "", source: row["source"] as? String ?? "",
                    refunds: row["refunds"] as? Int ?? -1, quantity: row["quantity"] as? Int ?? -1,
                    gross: row["gross"] as? String, tax: row["tax"] as? String,
                    unknownAmount: row["unknown_amount_refunds"] as? Int ?? -1,
                    familyRevokes: row["family_revokes"] as? Int ?? -1, reversed: row["reversed_refunds"] as? Int ?? -1,
                    notRevoked: row["not_revoked_refunds"] as? Int ?? -1)
            })
    }

    @Test func theReportEqualsTheTruthAfterTwoNights() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "twonights",
                extraYAML: "sync: { appleSweepCustomers: 0, googleSkew: 1442m }\n")
            let binary = try BuiltExecutable("storerecon")
            let config = ["--config", stores.configPath]
            let csv = stores.directory.appendingPathComponent("subscriptions.csv")
            try SubscriptionExport.write(simulator.spec, to: csv)
            let imported = try await binary.run(["import", "subscriptions", csv.path] + config)
            #expect(imported.status == 0, "\(imported.stderr.suffix(1500))")
            let knownTokens = Set(
                try String(contentsOf: csv, encoding: .utf8).split(separator: "\n").dropFirst()
                    .map { String($0.split(separator: ",")[1]) })

            let firstNight = Int64(Date().timeIntervalSince1970 * 1000)
            let first = try await binary.run(["run", "nightly"] + config)
            #expect(first.status == 0, "\(first.stderr.suffix(2000))")

            simulator.clock.advance(millis: Self.day)
            let yaml = try String(contentsOfFile: stores.configPath, encoding: .utf8)
            try yaml.replacingOccurrences(
                of: "googleSkew: 1442m", with: "appleOverlap: 2d"
            ).write(toFile: stores.configPath, atomically: true, encoding: .utf8)
            let second = try await binary.run(["run", "nightly"] + config)
            #expect(second.status == 0, "\(second.stderr.suffix(2000))")

            let connection = try PostgresConnection(conninfo: stores.conninfo)
            func highWater(_ job: String) throws -> Int64 {
                let date: Date = try connection.query(
                    "SELECT min(high_water) AS hw FROM sync_checkpoint WHERE job LIKE $1", [job])[0].decode("hw")
                return Int64((date.timeIntervalSince1970 * 1000).rounded())
            }
            let googleUpTo = try highWater("google_voided")
            #expect(googleUpTo > firstNight - 3_600_000, "the second night read up to the store's new day")
            // The orders storerecon re-read for refunds without revocation, and when (the simulator's clock is the
            // wall clock on the second night, when every known order not refunded is read again).
            var asked: [String: Int64] = [:]
            for row in try connection.query(
                "SELECT order_id, (extract(epoch FROM fetched_at) * 1000)::bigint AS ms FROM google_order WHERE status = 'ok'"
            ) {
                asked[try row.decode("order_id")] = try row.decode("ms")
            }
            let expected = Self.expected(
                simulator, knownTokens: knownTokens, googleUpTo: googleUpTo,
                googleFrom: firstNight - 30 * Self.day + 600_000, appleUpTo: try highWater("apple_notifications:%"),
                askedOrders: asked)
            #expect(expected.contains { $0.platform == "apple" && $0.reversed > 0 })
            // Several currencies, VAT countries among them.
            #expect(Set(expected.filter { $0.platform == "google" }.map(\.currency)).count >= 4)
            #expect(expected.contains { $0.platform == "google" && $0.tax != nil && $0.tax != "0.00" })
            #expect(
                simulator.groundTruth().appleRefunds.contains {
                    $0.quantity > 1 && $0.revocationType != "FAMILY_REVOKE"
                })

            let report = try await binary.run(
                [
                    "report", "refunds", "--from", "2000-01-01", "--to", "2100-01-01", "--by", "day,platform",
                    "--format", "json",
                ] + config)
            #expect(report.status == 0, "\(report.stderr.suffix(1500))")
            let actual = try Self.reported(report.stdout)
            let missing = expected.subtracting(actual).sorted { $0.description < $1.description }
            let extra = actual.subtracting(expected).sorted { $0.description < $1.description }
            #expect(missing.isEmpty && extra.isEmpty, "expected \(missing.prefix(3)), reported \(extra.prefix(3))")
            #expect(actual.map(\.refunds).reduce(0, +) > 300)
            #expect(!actual.contains { $0.platform == "google" && $0.unknownAmount > 0 })
            // About one Orders API call per 1000 voided rows: the ids of stored pages leave in calls of 1000, plus
            // each night's last partial call and backlog.
            let statistics = simulator.statistics()
            let orderCalls = statistics.filter { $0.endpoint == .googleOrders }.map(\.granted).reduce(0, +)
            let voidedCalls = statistics.filter { $0.endpoint == .googleVoidedPurchases }.map(\.granted).reduce(0, +)
            let rows = try connection.query("SELECT count(*) AS n FROM refund WHERE platform = 'google'")[0]
                .decode("n", as: Int.self)
            print("Orders API: \(orderCalls) calls for \(rows) voided rows (\(voidedCalls) voided pages)")
            // Each night also re-reads the known orders (one call per 1000, plus a split when an imported current
            // order does not exist yet at the store, which is a day behind on the first night).
            #expect(orderCalls >= 2 && orderCalls * 1000 <= rows + 2 * 12 * 1000, "\(orderCalls) calls, \(rows) rows")
            let notRevoked = actual.map(\.notRevoked).reduce(0, +)
            print("refunds without revocation found: \(notRevoked)")
            #expect(notRevoked > 0)
        }
    }
}
