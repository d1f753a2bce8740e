import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// A group's verdicts and claims in one statement, and its answers and releases in another: the same rows as the
/// statements one by one (RefundRequestStoreSendingTests).
@Suite("RefundRequestStore together")
struct RefundRequestStoreTogetherTests {
    let received = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func aGroupIsRecordedAndClaimedInOneStatementAndFinishedInAnother() throws {
        let base = RefundRequestStoreTests()
        let connection = try base.database()
        defer { connection.close() }
        let store = RefundRequestStore(appId: "droid")
        let reviews = (1...4).map { base.review("m\($0)", order: "GPA.\($0)", token: "t\($0)", hoursAgo: Double($0)) }
        try store.insert(reviews, runId: nil, on: connection)
        let ids = try store.open(limit: 10, now: received, on: connection).map(\.id)
        #expect(ids.count == 4)
        let verdict = RefundRequestVerdict(answer: nil, rule: "rules[0]", preference: .grant)
        let claims = ids.dropFirst().map {
            RefundRequestStore.Claim(
                id: $0, verdict: verdict, facts: Data("{\"f\":1}".utf8), body: Data("{\"b\":\($0)}".utf8))
        }
        let noFacts = RefundRequestStore.Silent(
            id: ids[0], verdict: RefundRequestVerdict(answer: .noFacts, rule: nil, preference: nil), facts: nil)
        // Another run's claim of the second one: this run takes the two others, and records the first.
        #expect(try store.claim([claims[0]], on: connection) == [ids[1]])
        #expect(try store.recordAndClaim([noFacts], claims, on: connection) == [ids[2], ids[3]])
        #expect(try store.open(limit: 10, now: received, on: connection).map(\.id) == [ids[0]])

        try store.finishAndRelease(
            [.init(id: ids[2], answer: .answered), .init(id: ids[3], answer: .failed, errorCode: "4000023")],
            released: [ids[1]], on: connection)
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
        let byId = Dictionary(uniqueKeysWithValues: zip(try rows.map { try $0.decode("id", as: Int64.self) }, seen))
        #expect(byId[ids[0]] == ["no_facts", "-", "-", "-"])
        #expect(byId[ids[1]] == ["-", "-", "-", "-"])
        #expect(byId[ids[2]] == ["answered", "-", "pending", "{\"b\": \(ids[2])}"])
        #expect(byId[ids[3]] == ["failed", "4000023", "-", "{\"b\": \(ids[3])}"])
        // The released one and the one without facts are open for the next run; finished ones are never claimed.
        #expect(Set(try store.open(limit: 10, now: received, on: connection).map(\.id)) == [ids[0], ids[1]])
        #expect(try store.recordAndClaim([], claims, on: connection) == [ids[1]])
    }
}
