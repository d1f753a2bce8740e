import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// Pages of `refund_request` keep room for each row's claimed version (sql/0027): claiming and answering the groups of
/// a page of requests one after the other, while another transaction's snapshot keeps every old version on its page
/// (as the other apps' statements do in a run), writes no index entry for a claim. With half of each page free (0026)
/// the third group's claims already left their pages.
@Suite("RefundRequestStore room")
struct RefundRequestStoreRoomTests {
    let received = Date(timeIntervalSince1970: 1_795_000_000)

    /// A Google review as RTDN delivers it: a purchase token and a review token of their real lengths.
    func review(_ n: Int) -> NewRefundRequest {
        let token = String(repeating: "abcdefghij", count: 15) + "\(n)"
        return NewRefundRequest(
            store: .google, requestId: "1893\(n)00000000\(n)", transactionId: "GPA.3312-4455-6677-\(10_000 + n)",
            originalId: token, productId: "com.droid.premium.yearly", productType: "subscription", country: "DE",
            familyShared: false, reason: "CHARGEBACK", pendingToken: "pending." + token,
            receivedAt: received.addingTimeInterval(-Double(n) * 60), purchasedAt: received,
            firstPurchasedAt: received, expiresAt: received)
    }

    /// This backend's updates and heap-only updates of `refund_request` not yet reported.
    static func updates(on connection: PostgresConnection) throws -> [Int] {
        let row = try connection.query(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'refund_request'")[0]
        return [try row.decode("n_tup_upd", as: Int.self), try row.decode("n_tup_hot_upd", as: Int.self)]
    }

    @Test func claimsStayOnTheirPagesWhileNoOldVersionCanBePruned() throws {
        let conninfo = try TestDatabase.create(prefix: "refundroom")
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid')")
        let other = try PostgresConnection(conninfo: conninfo)
        defer { other.close() }
        let store = RefundRequestStore(appId: "droid")
        try store.insert((1...64).map(review), runId: nil, on: connection)
        let open = try store.open(limit: 64, now: received, on: connection)
        #expect(open.count == 64)
        // The facts and body of a real answer (about 250 and 160 bytes).
        let facts = Data(
            ("{\"facts\":{\"customerConsented\":true,\"deliveryStatus\":\"delivered\",\"consumptionMilli\":25000,"
                + "\"sampleContentProvided\":false,\"asOf\":\"2026-11-28T10:00:00Z\"},\"priorRefunds\":0,"
                + "\"tenureDays\":412,\"periodUsedMilli\":310000,\"product\":\"subscription\"}").utf8)
        let verdict = RefundRequestVerdict(answer: nil, rule: "rules[1]", preference: .decline)
        try other.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        _ = try other.query("SELECT count(*) FROM app")
        for start in stride(from: 0, to: open.count, by: RefundRequestAnswerer.groupSize) {
            let group = open[start..<(start + RefundRequestAnswerer.groupSize)]
            let claims = group.map {
                let body = "{\"refundPreference\":\"DECLINE\",\"orderId\":\"\($0.request.transactionId)\",\"usage\":[]}"
                return RefundRequestStore.Claim(id: $0.id, verdict: verdict, facts: facts, body: Data(body.utf8))
            }
            // The claim's own counts (read in its transaction, before and after: the backend's counts not yet
            // reported to the server include its earlier transactions): every new version stayed on its page.
            let updates = try connection.transaction { connection in
                let before = try Self.updates(on: connection)
                #expect(try store.claim(claims, on: connection).count == claims.count)
                return zip(try Self.updates(on: connection), before).map { $0 - $1 }
            }
            #expect(updates == [claims.count, claims.count], "group from \(start)")
            try store.finish(group.map { .init(id: $0.id, answer: .answered) }, on: connection)
        }
        try other.execute("ROLLBACK")
    }
}
