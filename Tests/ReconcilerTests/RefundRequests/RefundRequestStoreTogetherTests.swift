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
        let ids = try base.openReviews(4, store: store, now: received, on: connection)
        #expect(ids.count == 4)
        let claims = RefundRequestStoreTests.claims(ids.dropFirst())
        let noFacts = RefundRequestStore.Silent(
            id: ids[0], verdict: RefundRequestVerdict(answer: .noFacts, rule: nil, preference: nil), facts: nil)
        // Another run's claim of the second one: this run takes the two others, and records the first.
        #expect(try store.claim([claims[0]], on: connection) == [ids[1]])
        #expect(try store.recordAndClaim([noFacts], claims, on: connection) == [ids[2], ids[3]])
        #expect(try store.open(limit: 10, now: received, on: connection).map(\.id) == [ids[0]])

        try store.finishAndRelease(
            [.init(id: ids[2], answer: .answered), .init(id: ids[3], answer: .failed, errorCode: "4000023")],
            released: [ids[1]], on: connection)
        let byId = try RefundRequestStoreTests.sendingColumns(on: connection)
        #expect(byId[ids[0]] == ["no_facts", "-", "-", "-"])
        #expect(byId[ids[1]] == ["-", "-", "-", "-"])
        #expect(byId[ids[2]] == ["answered", "-", "pending", "{\"b\": \(ids[2])}"])
        #expect(byId[ids[3]] == ["failed", "4000023", "-", "{\"b\": \(ids[3])}"])
        // The released one and the one without facts are open for the next run; finished ones are never claimed.
        #expect(Set(try store.open(limit: 10, now: received, on: connection).map(\.id)) == [ids[0], ids[1]])
        #expect(try store.recordAndClaim([], claims, on: connection) == [ids[1]])
    }
}
