import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// A group of answers claimed, finished and released in one statement each, on a real database: each request is
/// claimed once, recorded with its own answer, and a finished one can never be claimed again.
@Suite("RefundRequestStore sending")
struct RefundRequestStoreSendingTests {
    let received = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func aGroupIsClaimedOnceAndEachAnswerRecordedAsTheStoreSaid() throws {
        let base = RefundRequestStoreTests()
        let connection = try base.database()
        defer { connection.close() }
        let store = RefundRequestStore(appId: "droid")
        let ids = try base.openReviews(3, store: store, now: received, on: connection)
        #expect(ids.count == 3)
        let claims = RefundRequestStoreTests.claims(ids)
        // Another run's claim of the first one: this run takes only the two others.
        #expect(try store.claim([claims[0]], on: connection) == [ids[0]])
        #expect(try store.claim(claims, on: connection) == [ids[1], ids[2]])
        #expect(try store.open(limit: 10, now: received, on: connection).isEmpty)

        try store.finish(
            [.init(id: ids[1], answer: .answered), .init(id: ids[2], answer: .failed, errorCode: "4000023")],
            on: connection)
        try store.release(ids: [ids[0]], on: connection)
        let byId = try RefundRequestStoreTests.sendingColumns(on: connection)
        #expect(byId[ids[0]] == ["-", "-", "-", "-"])
        #expect(byId[ids[1]] == ["answered", "-", "pending", "{\"b\": \(ids[1])}"])
        #expect(byId[ids[2]] == ["failed", "4000023", "-", "{\"b\": \(ids[2])}"])
        // Finished ones are never claimed again; the released one is open for the next run.
        #expect(try store.claim(claims, on: connection) == [ids[0]])
    }
}

extension RefundRequestStoreTests {
    /// Stores `count` Google reviews for `store` and returns the ids of the open requests, nearest deadline first.
    func openReviews(
        _ count: Int, store: RefundRequestStore, now: Date, on connection: PostgresConnection
    ) throws -> [Int64] {
        let reviews = (1...count).map { review("m\($0)", order: "GPA.\($0)", token: "t\($0)", hoursAgo: Double($0)) }
        try store.insert(reviews, runId: nil, on: connection)
        return try store.open(limit: 10, now: now, on: connection).map(\.id)
    }

    /// A claim of each id, with a body naming it.
    static func claims(_ ids: some Sequence<Int64>) -> [RefundRequestStore.Claim] {
        let verdict = RefundRequestVerdict(answer: nil, rule: "rules[0]", preference: .grant)
        return ids.map {
            RefundRequestStore.Claim(
                id: $0, verdict: verdict, facts: Data("{\"f\":1}".utf8), body: Data("{\"b\":\($0)}".utf8))
        }
    }

    /// Each request's answer, error code, decision and body sent ("-" for none), by id.
    static func sendingColumns(on connection: PostgresConnection) throws -> [Int64: [String]] {
        let rows = try connection.query(
            "SELECT id, answer, error_code, decision, body_sent::text AS body FROM refund_request ORDER BY id")
        let seen = try rows.map {
            [
                try $0.decodeIfPresent("answer", as: String.self) ?? "-",
                try $0.decodeIfPresent("error_code", as: String.self) ?? "-",
                try $0.decodeIfPresent("decision", as: String.self) ?? "-",
                try $0.decodeIfPresent("body", as: String.self) ?? "-",
            ]
        }
        return Dictionary(uniqueKeysWithValues: zip(try rows.map { try $0.decode("id", as: Int64.self) }, seen))
    }
}
