import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// `recheck_request` on a real database: a queued subscription is due whatever its expiry, a token not known yet is
/// added so it can be asked about, and a request is cleared only by a check that began after it.
@Suite("RecheckRequests")
struct RecheckRequestsTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    func database() throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "recheck_requests"))
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid')")
        // Far from expiry and checked a day ago: no part of the planner but the queue lists it.
        try connection.execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, state, expires_at, expiry_changed_at,
                                      last_checked_at)
            VALUES ('droid', 'tok-known', 'monthly', 'active', $1::timestamptz + interval '200 days',
                    $1::timestamptz - interval '2 days', $1::timestamptz - interval '1 day')
            """, [Self.now])
        return connection
    }

    func request(_ token: String, product: String?, at offset: TimeInterval) -> RecheckRequests.Request {
        RecheckRequests.Request(
            app: "droid", platform: "google", storeId: token, productId: product, reason: "rtdn subscription 2",
            requestedAt: Self.now.addingTimeInterval(offset))
    }

    func due(_ connection: PostgresConnection) throws -> [String] {
        let ids = try RecheckPlanner(lead: 72 * 3600, lag: 24 * 3600).due(app: "droid", now: Self.now, on: connection)
            .map(\.id)
        return try connection.query(
            "SELECT store_id FROM subscription WHERE id = ANY ($1::bigint[]) ORDER BY store_id",
            [PostgresTextArray(ids.map(String.init))]
        ).map { try $0.decode("store_id") }
    }

    func queued(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("SELECT purchase_id FROM recheck_request ORDER BY purchase_id").map {
            try $0.decode("purchase_id")
        }
    }

    @Test func aQueuedSubscriptionIsDueAndAnUnknownTokenIsAddedFirst() throws {
        let connection = try database()
        defer { connection.close() }
        #expect(try due(connection).isEmpty)
        try RecheckRequests.queue(request("tok-known", product: "monthly", at: -60), on: connection)
        try RecheckRequests.queue(request("tok-new", product: "yearly", at: -60), on: connection)
        try RecheckRequests.queue(request("tok-bare", product: nil, at: -60), on: connection)
        #expect(try due(connection) == ["tok-known"])

        let (added, waiting) = try RecheckRequests.adoptUnknown(app: "droid", on: connection)
        #expect(added == 1 && waiting == 1)
        #expect(try due(connection) == ["tok-known", "tok-new"])
        let row = try connection.query(
            "SELECT product_id, state, entitled FROM subscription WHERE store_id = 'tok-new'")[0]
        #expect(try row.decode("product_id") as String == "yearly")
        #expect(try row.decode("state") as String == "unknown")
        #expect(try row.decode("entitled") as Bool == false)
        // Adding again adds nothing.
        let again = try RecheckRequests.adoptUnknown(app: "droid", on: connection)
        #expect(again.0 == 0 && again.1 == 1)
    }

    @Test func onlyACheckAfterTheRequestClearsIt() throws {
        let connection = try database()
        defer { connection.close() }
        try RecheckRequests.queue(request("tok-known", product: nil, at: -60), on: connection)
        // A second notification keeps the later time, whatever the order they are read in.
        try RecheckRequests.queue(request("tok-known", product: nil, at: -10), on: connection)
        try RecheckRequests.queue(request("tok-known", product: nil, at: -30), on: connection)
        func clear(_ reading: StatusReading, askedAt offset: TimeInterval) throws {
            try RecheckRequests.clear(
                app: "droid", storeId: "tok-known", after: reading, askedAt: Self.now.addingTimeInterval(offset),
                on: connection)
        }
        try clear(.missing, askedAt: -20)
        #expect(try queued(connection) == ["tok-known"], "a check begun before the latest request cleared it")
        try clear(.badAnswer("no line items"), askedAt: 0)
        #expect(try queued(connection) == ["tok-known"], "an unusable answer cleared the request")
        // A token first known from a notification has no expiry: only its request has it asked again.
        try clear(.unknownState("SUBSCRIPTION_STATE_NEW"), askedAt: 0)
        #expect(try queued(connection) == ["tok-known"], "an answer in an unknown state cleared the request")
        try clear(.missing, askedAt: 0)
        #expect(try queued(connection).isEmpty)
    }
}
