import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// Two nights as cron runs them: `run nightly` while the store's clock is a day behind the host's, then the store's
/// clock advanced the day and `run nightly` again, then `report refunds` against the scenario's truth, grouped the
/// same way, with exact amounts.
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
        var refunds = 0
        var quantity = 0
        var amountMilli: Int64 = 0
        var unknownAmount = 0
        var reversed = 0
        var description: String {
            "\(day) \(platform) \(currency): \(refunds) refunds, \(quantity) units, \(amountMilli) milli, "
                + "\(unknownAmount) unknown, \(reversed) reversed"
        }
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
        _ simulator: StoreSimulator, knownTokens: Set<String>, googleUpTo: Int64, googleFrom: Int64, appleUpTo: Int64
    ) -> Set<Group> {
        let truth = simulator.groundTruth()
        let prices = Dictionary(simulator.products.map { ($0.productId, $0) }) { first, _ in first }
        var groups: [String: Group] = [:]
        func add(day: String, platform: String, currency: String, quantity: Int, amount: Int64?, reversed: Bool) {
            let key = "\(day)|\(platform)|\(currency)"
            var group = groups[key] ?? Group(day: day, platform: platform, currency: currency)
            if reversed {
                group.reversed += 1
            } else {
                group.refunds += 1
                group.quantity += quantity
                if let amount { group.amountMilli += amount } else { group.unknownAmount += 1 }
            }
            groups[key] = group
        }
        for refund in truth.appleRefunds where refund.revocationDate <= appleUpTo {
            let total = refund.priceMilli * Int64(refund.quantity)
            let amount =
                refund.revocationType == "REFUND_PRORATED"
                ? (total * Int64(refund.revocationPercentage ?? 100_000) + 50_000) / 100_000 : total
            add(
                day: utcDay(refund.revocationDate), platform: "apple", currency: refund.currency,
                quantity: refund.quantity, amount: amount,
                reversed: refund.reversedDate.map { $0 <= appleUpTo } ?? false)
        }
        for void in truth.googleVoids
        where void.recorded && void.recordedTimeMillis >= googleFrom && void.recordedTimeMillis <= googleUpTo {
            // Google sends no price: storerecon prices a void from the configured product of the subscription its
            // token belongs to, when that subscription is known (imported), and counts it as unknown otherwise.
            let product = prices[void.productId]
            let known = knownTokens.contains(void.purchaseToken) && product != nil
            add(
                day: utcDay(void.voidedTimeMillis), platform: "google", currency: known ? product?.currency ?? "" : "",
                quantity: void.voidedQuantity ?? 1,
                amount: known ? (product?.priceMilli ?? 0) * Int64(void.voidedQuantity ?? 1) : nil,
                reversed: false)
        }
        return Set(groups.values)
    }

    static func reported(_ json: String) throws -> Set<Group> {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let rows = try #require(object["groups"] as? [[String: Any]])
        return Set(
            try rows.map { row in
                let milli = try #require(row["amount_milli"] as? Int)
                // The decimal string is the same amount, exactly.
                let text = try #require(row["amount"] as? String)
                #expect(Decimal(string: text) == Decimal(milli) / 1000, "\(text) vs \(milli)")
                return Group(
                    day: row["day"] as? String ?? "", platform: row["platform"] as? String ?? "",
                    currency: row["currency"] as? String ?? "", refunds: row["refunds"] as? Int ?? -1,
                    quantity: row["quantity"] as? Int ?? -1, amountMilli: Int64(milli),
                    unknownAmount: row["unknown_amount_refunds"] as? Int ?? -1,
                    reversed: row["reversed_refunds"] as? Int ?? -1)
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
            let expected = Self.expected(
                simulator, knownTokens: knownTokens, googleUpTo: googleUpTo,
                googleFrom: firstNight - 30 * Self.day + 600_000, appleUpTo: try highWater("apple_notifications:%"))
            #expect(expected.contains { $0.platform == "apple" && $0.reversed > 0 })
            #expect(expected.contains { $0.platform == "google" && $0.unknownAmount > 0 })

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
        }
    }
}
