import Foundation
import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// ``RefundRequestAnswerer`` on a real database with calls the test holds: the next group is claimed while a group's
/// calls are out, nearest deadline first, and a call that did not reach the store, with other groups out, leaves
/// every group recorded and no claim behind, as does a shutdown.
@Suite("RefundRequestAnswerer groups in flight")
struct RefundRequestAnswererTests {
    static let received = Date(timeIntervalSince1970: 1_795_000_000)
    static let size = RefundRequestAnswerer.groupSize

    /// `count` Apple requests with consenting facts, `t001` nearest its deadline; returns the database's conninfo.
    func database(_ count: Int) throws -> String {
        let conninfo = try TestDatabase.create(prefix: "answerpipe")
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.ios')")
        try Self.store((1...count).map { Self.request(Self.transaction($0), at: $0 - 1) }, on: connection)
        return conninfo
    }

    func environment(_ connection: PostgresConnection, shutdown: ShutdownSignal = ShutdownSignal()) -> JobEnvironment {
        JobEnvironment(
            connection: connection, gate: SimulatorSampleFuzzTests.OpenGate(), counters: JobCounters(), runId: nil,
            shutdown: shutdown, dryRun: false, logger: Logger(label: "test"), progress: nil,
            now: { Self.received })
    }

    /// The answerer of app `ios`, sending with `send`.
    func makeAnswerer(
        _ send: @escaping @Sendable (Data, OpenRefundRequest) async throws -> SendResult
    ) -> RefundRequestAnswerer {
        RefundRequestAnswerer(
            requests: RefundRequestStore(appId: "ios"), decider: RefundRequestDecider(rules: RefundRequestRules()),
            send: send)
    }

    /// The transaction id of the request at `place` in deadline order (from 1).
    static func transaction(_ place: Int) -> String { "t" + String(1000 + place).dropFirst() }

    /// An Apple request for transaction `id`, received `offset` seconds after the first.
    static func request(_ id: String, at offset: Int) -> NewRefundRequest {
        NewRefundRequest(
            store: .apple, requestId: "u-\(id)", transactionId: id, originalId: "o-\(id)", productId: "coins",
            productType: "Consumable", country: "FR", familyShared: false, reason: nil, pendingToken: nil,
            receivedAt: received.addingTimeInterval(Double(offset)), purchasedAt: nil, firstPurchasedAt: nil,
            expiresAt: nil, priceNanos: 990_000_000, currency: "EUR")
    }

    /// Stores `requests` of app `ios` with the backend's consenting facts for each.
    static func store(_ requests: [NewRefundRequest], on connection: PostgresConnection) throws {
        try RefundRequestStore(appId: "ios").insert(requests, runId: nil, on: connection)
        let facts = ConsumptionFacts(
            customerConsented: true, deliveryStatus: .delivered, consumptionMilli: 25_000,
            sampleContentProvided: false, asOf: received.addingTimeInterval(-86_400))
        _ = try ConsumptionFactStore.upsert(
            requests.map { ConsumptionFactRow(platform: .apple, purchaseId: $0.transactionId, facts: facts) },
            on: connection)
    }

    /// The request's place in deadline order, from 1.
    static func place(_ open: OpenRefundRequest) -> Int { Int(open.request.transactionId.dropFirst()) ?? 0 }

    static func count(_ connection: PostgresConnection, _ condition: String) throws -> Int {
        try connection.query(
            "SELECT count(*)::int AS n FROM refund_request WHERE \(condition)")[0].decode("n")
    }

    @Test func theNextGroupIsClaimedWhileAGroupsCallsAreOut() async throws {
        let conninfo = try database(3 * Self.size)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let latch = Latch()
        let calls = CallLog()
        let answerer = makeAnswerer { _, open in
            calls.add(open.request.transactionId)
            if Self.place(open) <= Self.size { await latch.wait() }
            return .answered
        }
        // The first group's calls are held until the database shows the second group claimed (and perhaps answered)
        // with the first still out: answering one group after the other never gets there.
        let (first, second) = (Self.transaction(Self.size), Self.transaction(2 * Self.size))
        async let overlapped = Latch.open(
            latch, conninfo: conninfo,
            when: "(SELECT count(*) FILTER (WHERE transaction_id <= '\(first)' AND answer IS NULL) = \(Self.size) "
                + "AND count(*) = \(2 * Self.size) FROM refund_request "
                + "WHERE sending_since IS NOT NULL AND transaction_id <= '\(second)')")
        try await answerer.answerOpen(in: environment(connection))
        #expect(try await overlapped)
        #expect(try Self.count(connection, "answer = 'answered'") == 3 * Self.size)
        #expect(calls.counts.count == 3 * Self.size && calls.counts.values.allSatisfy { $0 == 1 })
        // Claimed nearest deadline first: no request was claimed after one with a later deadline.
        let order = try connection.query(
            """
            SELECT bool_and(sending_since >= before) AS ordered FROM (
                SELECT sending_since, lag(sending_since) OVER (ORDER BY deadline, id) AS before FROM refund_request
            ) claims WHERE before IS NOT NULL
            """)
        #expect(try order[0].decode("ordered", as: Bool.self))
    }

    @Test func requestsFoundWhileAGroupsCallsAreOutAreClaimedBeforeTheyAreAnswered() async throws {
        let conninfo = try database(Self.size)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let latch = Latch()
        let answerer = makeAnswerer { _, open in
            if Self.place(open) <= Self.size { await latch.wait() }
            return .answered
        }
        let found = FoundLater()
        var finder = found.finder
        // Once the first group is out, the next page's requests arrive; the first group's calls are held until the
        // database shows the new ones claimed: an answerer that waits for a group's end before it stores what was
        // found never gets there.
        let later = (1...Self.size).map { Self.transaction(Self.size + $0) }
        async let claimedLater: Bool = {
            let out = try await Latch.open(
                Latch(), conninfo: conninfo,
                when: "(SELECT count(*) FROM refund_request WHERE sending_since IS NOT NULL) = \(Self.size)")
            found.arrive(later.map { Self.request($0, at: Self.size) })
            return try await Latch.open(
                latch, conninfo: conninfo,
                when:
                    "(SELECT count(*) FILTER (WHERE transaction_id <= '\(Self.transaction(Self.size))' AND answer IS NULL) "
                    + "= \(Self.size) AND count(*) FILTER (WHERE transaction_id > '\(Self.transaction(Self.size))' "
                    + "AND sending_since IS NOT NULL) > 0 FROM refund_request)") && out
        }()
        try await answerer.answerOpen(in: environment(connection), finder: &finder)
        #expect(try await claimedLater)
        #expect(try Self.count(connection, "answer = 'answered'") == 2 * Self.size)
    }

    @Test func aCallThatFailsWithOtherGroupsOutLeavesEveryGroupRecordedAndNoClaim() async throws {
        let inFlight = RefundRequestAnswerer.groupsInFlight
        let conninfo = try database((inFlight + 2) * Self.size)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let latch = Latch()
        let calls = CallLog()
        let answerer = makeAnswerer { _, open in
            calls.add(open.request.transactionId)
            if Self.place(open) == 3 { throw Unreached() }
            if Self.place(open) > Self.size { await latch.wait() }
            return .answered
        }
        // The other groups' calls are held until the first group is recorded: its failure is seen with them out.
        async let recordedFirst = Latch.open(
            latch, conninfo: conninfo,
            when: "(SELECT count(*) FROM refund_request WHERE answer = 'answered') = \(Self.size - 1) "
                + "AND (SELECT sending_since IS NULL AND answer IS NULL FROM refund_request WHERE transaction_id = '\(Self.transaction(3))')"
        )
        let environment = environment(connection)
        await #expect(throws: Unreached.self) { try await answerer.answerOpen(in: environment) }
        #expect(try await recordedFirst)
        #expect(try Self.count(connection, "sending_since IS NOT NULL AND answer IS NULL") == 0)
        #expect(try Self.count(connection, "answer = 'answered'") == inFlight * Self.size - 1)
        // No group was claimed after the failure; the request whose call failed is open again.
        #expect(try Self.count(connection, "sending_since IS NULL AND answer IS NULL") == 2 * Self.size + 1)
        let open = try RefundRequestStore(appId: "ios").open(limit: 1, now: Self.received, on: connection)
        #expect(open.map(\.request.transactionId) == ["t003"])
        #expect(calls.counts.count == inFlight * Self.size && calls.counts.values.allSatisfy { $0 == 1 })
    }

    @Test func aShutdownWithGroupsOutRecordsThemAndClaimsNoMore() async throws {
        let inFlight = RefundRequestAnswerer.groupsInFlight
        let conninfo = try database((inFlight + 2) * Self.size)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let (latch, shutdown) = (Latch(), ShutdownSignal())
        // Every call is held until all the groups that may be out are claimed; each asks for the stop before it
        // ends, so no group ends before the stop.
        let answerer = makeAnswerer { _, _ in
            await latch.wait()
            shutdown.request()
            return .answered
        }
        async let claimed = Latch.open(
            latch, conninfo: conninfo,
            when: "(SELECT count(*) FROM refund_request WHERE sending_since IS NOT NULL) = \(inFlight * Self.size)")
        let environment = environment(connection, shutdown: shutdown)
        await #expect(throws: ReconcilerError.self) { try await answerer.answerOpen(in: environment) }
        #expect(try await claimed)
        #expect(try Self.count(connection, "answer = 'answered'") == inFlight * Self.size)
        #expect(try Self.count(connection, "sending_since IS NOT NULL AND answer IS NULL") == 0)
        #expect(try Self.count(connection, "sending_since IS NULL AND answer IS NULL") == 2 * Self.size)
    }
}

/// A call that did not reach the store.
private struct Unreached: Error {}

/// How often each transaction's answer was sent.
private final class CallLog: Sendable {
    private let calls = Mutex<[String: Int]>([:])

    func add(_ transactionId: String) { calls.withLock { $0[transactionId, default: 0] += 1 } }

    var counts: [String: Int] { calls.withLock { $0 } }
}

/// Calls held until the test opens it.
private final class Latch: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if now { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Opens `latch` once `condition` holds in the database, or after 30 s (only a wrong answerer waits that
    /// long). Returns whether the condition was seen.
    static func open(_ latch: Latch, conninfo: String, when condition: String) async throws -> Bool {
        let connection = try PostgresConnection(conninfo: conninfo)
        defer {
            connection.close()
            latch.open()
        }
        for _ in 0..<3000 {
            if try connection.query("SELECT (\(condition)) AS seen")[0].decode("seen", as: Bool.self) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
