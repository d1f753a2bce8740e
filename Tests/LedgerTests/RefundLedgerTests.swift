import AppStoreServerAPI
import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import Reconciler
import Synchronization
import TestSupport
import Testing

@testable import Ledger

/// One typed refund record for both stores (issue 17): each store's rows map to records by pure functions, and one
/// ledger store writes them, on a real PostgreSQL.
@Suite struct RefundLedgerTests {
    static func voided(_ json: String) throws -> VoidedPurchase {
        try #require(
            try VoidedPurchasesListResponse(json: Data(#"{"voidedPurchases":[\#(json)]}"#.utf8)).voidedPurchases.first)
    }

    static func apple(_ fields: String) throws -> RefundRecord {
        let json = Data(
            """
            {"transactionId":"20","originalTransactionId":"10","productId":"pro","price":9990,"currency":"USD",
             "purchaseDate":1790000000000,"revocationDate":1790000500000,"revocationReason":0,\(fields)}
            """.utf8)
        let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        guard case .refund(let record) = RefundRecord.intake(VerifiedTransaction(payload: payload, json: json)) else {
            throw LedgerTestError("not a refund")
        }
        return record
    }

    /// A connection to a fresh, migrated database with one Google and one Apple app, and a Google subscription
    /// whose product has a configured price.
    static func database(_ prefix: String) throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: prefix))
        try Migrator(connection: connection).migrate()
        try connection.execute(
            """
            INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid'),
                                                                ('ios', 'apple', 'com.ios')
            """)
        try connection.execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, state, current_order_id)
            VALUES ('droid', 'token-1', 'monthly', 'active', 'GPA.1')
            """)
        return connection
    }

    @Test func aVoidedRowMapsToATypedRecord() throws {
        let whole = try Self.voided(
            #"{"purchaseToken":"t","orderId":"GPA.1","purchaseTimeMillis":"1789000000000","voidedTimeMillis":"1789000000456","voidedReason":99,"voidedSource":1}"#
        )
        guard case .refund(let record) = RefundRecord.voided(whole) else {
            Issue.record("a well-formed voided row was not mapped")
            return
        }
        #expect(record.part == .whole && record.part.key == "" && record.part.revoked)
        #expect(record.kind == .full && record.amount == .estimated && record.quantity == 1)
        #expect(record.refundedAt == Date(timeIntervalSince1970: 1_789_000_000.456))
        #expect(record.purchasedAt == Date(timeIntervalSince1970: 1_789_000_000))
        #expect(record.reasonCode == 99 && record.reasonLabel == "unknown" && record.sourceCode == 1)
        let part = try Self.voided(
            #"{"purchaseToken":"t","orderId":"GPA.2","voidedTimeMillis":"1789000000456","voidedQuantity":2}"#)
        guard case .refund(let partial) = RefundRecord.voided(part) else {
            Issue.record("a partial voided row was not mapped")
            return
        }
        #expect(partial.part == .quantity(voidedMillis: 1_789_000_000_456, quantity: 2))
        #expect(partial.kind == .partialQuantity && partial.quantity == 2 && partial.part.key == "1789000000456:2")
        let keyless = try Self.voided(#"{"purchaseToken":"t","voidedTimeMillis":"1789000000456"}"#)
        guard case .unstorable(let reason) = RefundRecord.voided(keyless) else {
            Issue.record("a row without orderId was mapped")
            return
        }
        #expect(reason.hasPrefix("orderId: missing"))
    }

    /// The Orders API's amount is the truth for a Google refund: the voided list, read again, keeps it; a change of
    /// the row (a new reason) is taken, and the amount still kept.
    @Test func aVoidedRowReadAgainNeverOverwritesTheOrdersAmount() throws {
        let connection = try Self.database("ledger_google")
        defer { connection.close() }
        let ledger = RefundLedger(appId: "droid", prices: ConfiguredPrices(["monthly": ["USD": 4990]]))
        // The sale's currency is known from the order (an estimate is only ever in the sale's currency).
        try connection.execute(
            "INSERT INTO google_order (app_id, order_id, status, currency) VALUES ('droid', 'GPA.1', 'ok', 'USD')")
        let row = #"{"purchaseToken":"token-1","orderId":"GPA.1","voidedTimeMillis":"1789000000456","voidedReason":1}"#
        guard case .refund(let record) = RefundRecord.voided(try Self.voided(row)) else {
            Issue.record("not mapped")
            return
        }
        #expect(try ledger.upsert([record], runId: nil, on: connection) == (1, 0))
        let estimate = try connection.query(
            "SELECT gross_amount, amount_source, currency, product_id FROM refund WHERE order_id = 'GPA.1'")[0]
        #expect(try estimate.decode("gross_amount") as Int64 == 4990)
        #expect(try estimate.decode("amount_source") as String == "configured")
        #expect(try estimate.decode("product_id") as String == "monthly")
        // The subscription's current order was refunded: entitlement ends.
        #expect(
            try connection.query("SELECT state FROM subscription WHERE store_id = 'token-1'")[0].decode("state")
                as String == "revoked")
        try connection.execute(
            """
            UPDATE refund SET gross_amount = 5490000000, tax_amount = 500000000, amount_precision = 9,
                              amount_source = 'store', currency = 'EUR' WHERE order_id = 'GPA.1'
            """)
        // Read again as part of a page thought new: the plain INSERT meets the row and the upsert takes over.
        #expect(
            try connection.transaction { connection in
                try ledger.upsert([record], runId: nil, expectNew: true, on: connection)
            } == (0, 0))
        guard
            case .refund(let changed) = RefundRecord.voided(
                try Self.voided(row.replacingOccurrences(of: #""voidedReason":1"#, with: #""voidedReason":6"#)))
        else {
            Issue.record("not mapped")
            return
        }
        #expect(try ledger.upsert([changed], runId: nil, on: connection) == (0, 1))
        let stored = try connection.query(
            "SELECT gross_amount, amount_source, currency, reason_code FROM refund WHERE order_id = 'GPA.1'")[0]
        #expect(try stored.decode("gross_amount") as Int64 == 5_490_000_000)
        #expect(try stored.decode("amount_source") as String == "store")
        #expect(try stored.decode("currency") as String == "EUR")
        #expect(try stored.decode("reason_code") as Int == 6)
    }

    /// Apple signs each answer anew: the same refund read again (a new `signedDate`) changes nothing; a changed
    /// revocation (now prorated) replaces the amount, since Apple's payload states it.
    @Test func anAppleRefundReadAgainChangesOnlyWhatTheStoreChanged() throws {
        let connection = try Self.database("ledger_apple")
        defer { connection.close() }
        let ledger = RefundLedger(appId: "ios")
        #expect(
            try ledger.upsert([try Self.apple(#""signedDate":1790000600000"#)], runId: nil, on: connection) == (1, 0))
        #expect(
            try ledger.upsert([try Self.apple(#""signedDate":1790000700000"#)], runId: nil, on: connection) == (0, 0))
        let prorated = try Self.apple(
            #""signedDate":1790000800000,"revocationType":"REFUND_PRORATED","revocationPercentage":50000"#)
        #expect(try ledger.upsert([prorated], runId: nil, on: connection) == (0, 1))
        let stored = try connection.query(
            "SELECT gross_amount, amount_precision, amount_source, refund_type FROM refund WHERE order_id = '20'")[0]
        #expect(try stored.decode("gross_amount") as Int64 == 9990 * 50000)
        #expect(try stored.decode("amount_precision") as Int == 8)
        #expect(try stored.decode("amount_source") as String == "store")
        #expect(try stored.decode("refund_type") as String == "prorated")
    }

    @Test func aBatchRepeatingARecordStoresItOnceAndCountsTheRepeat() throws {
        let connection = try Self.database("ledger_repeat")
        defer { connection.close() }
        let ledger = RefundLedger(appId: "ios")
        let counters = CountingCounters()
        let first = try Self.apple(#""signedDate":1790000600000"#)
        let later = try Self.apple(
            #""signedDate":1790000700000,"revocationType":"REFUND_PRORATED","revocationPercentage":50000"#)
        let counts = try connection.transaction { connection in
            try ledger.write(
                [first, later], quarantined: [], job: .appleRefunds, runId: nil, logger: Logger(label: "test"),
                counters: counters, on: connection)
        }
        #expect(counts == (1, 0) && counters["merged_repeats"] == 1)
        #expect(
            try connection.query("SELECT refund_type FROM refund WHERE order_id = '20'")[0].decode("refund_type")
                as String == "prorated")
    }
}

/// A failed expectation of a helper.
struct LedgerTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Counters a test reads back.
final class CountingCounters: LedgerCounters, Sendable {
    private let counts = Mutex<[String: Int]>([:])
    func add(_ name: String, _ amount: Int) { counts.withLock { $0[name, default: 0] += amount } }
    subscript(_ name: String) -> Int { counts.withLock { $0[name] ?? 0 } }
}
