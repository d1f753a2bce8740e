import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// A voided-purchase notification and the nightly voided list, on a real database, in either order: one row per
/// order, the list's fields win, the money is never counted twice, and a notification read again changes nothing.
@Suite("Voided-purchase notifications in the ledger")
struct VoidedNoticeLedgerTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let ledger = RefundLedger(appId: "droid", prices: ConfiguredPrices(["monthly": ["USD": 4990]]))
    let notice = RefundRecord.VoidedNotice(
        purchaseToken: "token-1", orderId: "GPA.1", productType: 1, refundType: 1, eventMillis: 1_794_999_000_000)
    let payload = Data(#"{"voidedPurchaseNotification":{"orderId":"GPA.1","refundType":1}}"#.utf8)

    func database() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "voided_notice"))
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid')")
        try connection.execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, state)
            VALUES ('droid', 'token-1', 'monthly', 'active')
            """)
        return connection
    }

    func record(on connection: PostgresConnection) throws -> GoogleRefundRequests.VoidedOutcome {
        // Inside a transaction, as the message batch's.
        try connection.transaction { connection in
            try GoogleRefundRequests.record(
                notice, payload: payload, ledger: ledger, runId: nil, now: now, logger: Logger(label: "test"),
                counters: nil, on: connection)
        }
    }

    /// What the voided list says of the same void, written as the voided sync writes it.
    func listRow(on connection: PostgresConnection) throws {
        let json =
            #"{"purchaseToken":"token-1","orderId":"GPA.1","purchaseTimeMillis":"1790000000000","#
            + #""voidedTimeMillis":"1794999060000","voidedReason":7,"voidedSource":2}"#
        let row = try #require(
            try VoidedPurchasesListResponse(json: Data(#"{"voidedPurchases":[\#(json)]}"#.utf8)).voidedPurchases.first)
        guard case .refund(let record) = RefundRecord.voided(row, receivedAt: now) else {
            Issue.record("the list's row was not mapped")
            return
        }
        _ = try connection.transaction { connection in
            try ledger.write(
                [record], quarantined: [], job: .googleVoided, runId: nil, logger: Logger(label: "test"),
                counters: nil, on: connection)
        }
    }

    struct Stored: Equatable {
        var rows: Int
        var gross: Int64?
        var source: String?
        var reason: Int?
        var label: String
        var purchased: Date?
        var refunded: Date
    }

    func stored(_ connection: PostgresConnection) throws -> Stored {
        let row = try connection.query(
            """
            SELECT count(*) OVER () AS n, gross_amount, amount_source, reason_code, reason_label, purchased_at,
                   refunded_at
            FROM refund WHERE app_id = 'droid' AND order_id = 'GPA.1'
            """)[0]
        return Stored(
            rows: try row.decode("n"), gross: try row.decodeIfPresent("gross_amount"),
            source: try row.decodeIfPresent("amount_source"), reason: try row.decodeIfPresent("reason_code"),
            label: try row.decode("reason_label"), purchased: try row.decodeIfPresent("purchased_at"),
            refunded: try row.decode("refunded_at"))
    }

    /// The row the list leaves, worked out by hand: its reason (7, chargeback), its times, the estimate of one
    /// `monthly` at 4.990 USD.
    var listed: Stored {
        Stored(
            rows: 1, gross: 4990, source: "configured", reason: 7, label: "chargeback",
            purchased: Date(timeIntervalSince1970: 1_790_000_000),
            refunded: Date(timeIntervalSince1970: 1_794_999_060))
    }

    @Test func theNotificationFirstThenTheListIsOneRowTheListFills() throws {
        let connection = try database()
        defer { connection.close() }
        #expect(try record(on: connection) == .recorded)
        #expect(
            try stored(connection)
                == Stored(
                    rows: 1, gross: 4990, source: "configured", reason: nil, label: "unknown", purchased: nil,
                    refunded: Date(timeIntervalSince1970: 1_794_999_000)))
        #expect(try record(on: connection) == .known)
        try listRow(on: connection)
        #expect(try stored(connection) == listed)
    }

    /// The row waits in the Orders backlog like a voided row: the next voided sync asks for its amount, with or
    /// without the app's backlog mark from an earlier sync.
    @Test func theRecordedRowIsInTheOrdersBacklog() throws {
        let connection = try database()
        defer { connection.close() }
        let orders = GoogleOrderStore(appId: "droid")
        let earlier = try orders.openBacklog(initialize: true, on: connection)
        try orders.closeBacklog(earlier, on: connection)
        #expect(try record(on: connection) == .recorded)
        #expect(try orders.backlog(limit: 10, on: connection) == ["GPA.1"])
        let next = try orders.openBacklog(initialize: true, on: connection)
        #expect(next.askedThrough != nil)
        #expect(try orders.backlog(limit: 10, mark: next, on: connection) == ["GPA.1"])
    }

    @Test func theListFirstThenTheNotificationLeavesTheListsRow() throws {
        let connection = try database()
        defer { connection.close() }
        try listRow(on: connection)
        #expect(try stored(connection) == listed)
        #expect(try record(on: connection) == .known)
        #expect(try stored(connection) == listed)
    }
}
