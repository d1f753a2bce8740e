import Foundation
import Postgres
import Testing

@testable import Ledger

/// The amounts backlog by mark (migration 0019): a sync looks only at the refunds recorded since the app's mark and
/// at what the indexes find, and that is what the scan of the whole ledger finds, less what the mark vouches for.
@Suite struct GoogleOrderBacklogTests {
    typealias Store = GoogleOrderStoreTests

    /// A whole-order void of a fresh order `id`, recorded `hoursAgo` hours ago.
    static func voided(_ id: String, hoursAgo: Int, on connection: PostgresConnection) throws -> OrderHistoryBuilder {
        var order = OrderHistoryBuilder(currency: "USD", total: "4.99", tax: "0.40", quantity: 1)
        order.orderId = id
        order.fullRefund("4.99", tax: "0.40", at: Store.t0)
        try Store.void(order, [(nil, Store.t0)], on: connection)
        try connection.execute(
            "UPDATE refund SET recorded_at = now() - make_interval(hours => $2) WHERE order_id = $1", [id, hoursAgo])
        return order
    }

    /// Seven orders, one of each kind, against a mark two days old and a sync begun an hour ago.
    @Test func theMarkedBacklogIsTheWholeOneLessWhatTheMarkVouchesFor() throws {
        let connection = try Store.database("backlog_marked")
        defer { connection.close() }
        let store = GoogleOrderStore(appId: "droid")
        // Recorded before the mark and never asked: the run that set the mark asked it (this one cannot be real).
        _ = try Self.voided("GPA.old-unasked", hoursAgo: 72, on: connection)
        // Recorded since the mark, before the sync began: never asked.
        _ = try Self.voided("GPA.new-unasked", hoursAgo: 24, on: connection)
        // Old, but pending at Google.
        var pending = try Self.voided("GPA.pending", hoursAgo: 72, on: connection)
        pending.state = "PENDING_REFUND"
        _ = try Store.store(pending, on: connection)
        // Old, refused for want of permission two days ago.
        _ = try Self.voided("GPA.refused", hoursAgo: 72, on: connection)
        try store.mark(["GPA.refused"], status: .noPermission, on: connection)
        try connection.execute(
            "UPDATE google_order SET fetched_at = now() - interval '2 days' WHERE order_id = 'GPA.refused'")
        // Old, and priced: not in any backlog.
        let priced = try Self.voided("GPA.priced", hoursAgo: 72, on: connection)
        _ = try Store.store(priced, on: connection)
        // Old, set aside for refunding more than it charged.
        let over = try Store.overRefunded(on: connection)
        _ = try Store.store(over, on: connection)
        try connection.execute(
            "UPDATE refund SET recorded_at = now() - interval '72 hours' WHERE order_id = $1", [over.orderId])
        // Recorded after the sync began (another process's page): the next sync's.
        _ = try Self.voided("GPA.concurrent", hoursAgo: 0, on: connection)

        let now: Date = try connection.query("SELECT now() AS t")[0].decode("t")
        let mark = GoogleOrderStore.BacklogMark(
            askedThrough: now.addingTimeInterval(-48 * 3600), runStarted: now.addingTimeInterval(-3600))
        let whole = Set(try store.backlog(limit: 100, on: connection))
        let marked = Set(try store.backlog(limit: 100, mark: mark, on: connection))
        #expect(
            whole == [
                "GPA.old-unasked", "GPA.new-unasked", "GPA.pending", "GPA.refused", over.orderId, "GPA.concurrent",
            ])
        #expect(marked == ["GPA.new-unasked", "GPA.pending", "GPA.refused", over.orderId])
        // No mark yet: the whole ledger.
        let unmarked = GoogleOrderStore.BacklogMark(askedThrough: nil, runStarted: now)
        #expect(Set(try store.backlog(limit: 100, mark: unmarked, on: connection)) == whole)
    }

    /// An app with no Google refund gets its mark when its first sync opens (not in a dry run); one with refunds
    /// and no mark is looked at whole, once; a closed sync moves the mark to its start less the margin, never back.
    @Test func theMarkIsSetAtTheFirstSyncAndOnlyMovesForward() throws {
        let connection = try Store.database("backlog_mark")
        defer { connection.close() }
        let store = GoogleOrderStore(appId: "droid")
        #expect(try store.openBacklog(initialize: false, on: connection).askedThrough == nil)
        let first = try store.openBacklog(initialize: true, on: connection)
        let margin = GoogleOrderStore.backlogMarkMargin
        let firstMark = try #require(first.askedThrough)
        #expect(abs(first.runStarted.timeIntervalSince(firstMark) - margin) < 5)

        try store.closeBacklog(
            GoogleOrderStore.BacklogMark(askedThrough: firstMark, runStarted: first.runStarted + 7200), on: connection)
        let moved = try #require(try store.openBacklog(initialize: true, on: connection).askedThrough)
        #expect(abs(moved.timeIntervalSince(first.runStarted + 7200 - margin)) < 0.001)
        // An older run closing later does not move it back.
        try store.closeBacklog(first, on: connection)
        #expect(try store.openBacklog(initialize: true, on: connection).askedThrough == moved)

        // Another app's ledger already holds refunds: no mark until a sync has looked at all of it.
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid2', 'google', 'com.droid2')")
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, payload)
            VALUES ('droid2', 'google', 'GPA.9', now(), 'full', '{}')
            """)
        #expect(try GoogleOrderStore(appId: "droid2").openBacklog(initialize: true, on: connection).askedThrough == nil)
    }
}
