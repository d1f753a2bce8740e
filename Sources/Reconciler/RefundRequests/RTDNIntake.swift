import Foundation
import Ledger
import Logging
import Postgres

/// Stores what a pull of storerecon's Pub/Sub subscription delivered, inside the pull's transaction, before it is
/// acknowledged: every message (`rtdn_message`) and every refund review (`refund_request`) once however often it came
/// (in this pull or an earlier one), a message acted on only the first time it is stored (a voided purchase recorded
/// in the ledger, a subscription change queued for the recheck: `GoogleRefundRequests+Notices`).
struct RTDNIntake: Sendable {
    let appId: String
    let requests: RefundRequestStore
    let ledger: RefundLedger

    /// Stores a pull's messages and their requests, one statement each. Returns the orders whose refunds the
    /// voided-purchase messages recorded.
    func store(_ messages: [RTDNMessage], in environment: JobEnvironment, on connection: PostgresConnection) throws
        -> [String]
    {
        if messages.contains(where: { $0.voided != nil }) {
            // The app's lock of Google refund writers before any row of the pull: taken after them, a writer holding
            // it could wait on a row this transaction holds (a recheck request, through the recheck) while this one
            // waits on the lock.
            try GoogleOrderStore(appId: appId, prices: ledger.prices).serialize(on: connection)
        }
        let new = try RTDNMessageStore.insert(messages, app: appId, on: connection)
        let requestsNew = try requests.insert(
            messages.compactMap(\.request), runId: environment.runId, on: connection)
        if !requestsNew.isEmpty { environment.counters.add("requests_new", requestsNew.count) }
        var recorded: [String] = []
        var handled = Set<String>()
        // A redelivered or duplicated message was acted on (or reported) when it was first stored.
        for message in messages where new.contains(message.messageId) && handled.insert(message.messageId).inserted {
            if let why = message.unknownBecause {
                environment.counters.add("messages_unknown")
                environment.logger.warning(
                    "RTDN message \(message.messageId): stored and acknowledged, not acted on: \(why)")
            }
            recorded += try handleNotice(message, in: environment, on: connection)
        }
        return recorded
    }

    /// Inside the pull's transaction, for a message stored for the first time. Returns the orders whose refunds it
    /// recorded (none or one).
    func handleNotice(_ message: RTDNMessage, in environment: JobEnvironment, on connection: PostgresConnection)
        throws -> [String]
    {
        if let change = message.subscriptionChange {
            let reason = "rtdn subscription notificationType \(change.notificationType.map(String.init) ?? "none")"
            try RecheckRequests.queue(
                RecheckRequests.Request(
                    app: appId, platform: "google", storeId: change.purchaseToken, productId: change.subscriptionId,
                    reason: reason, requestedAt: environment.now()),
                on: connection)
            environment.counters.add("rechecks_queued")
            return []
        }
        guard let notice = message.voided else { return [] }
        let outcome = try GoogleRefundRequests.record(
            notice, payload: message.notification, ledger: ledger, runId: environment.runId, now: environment.now(),
            logger: environment.logger, counters: environment.counters, on: connection)
        environment.counters.add(outcome.counter)
        if case .unstorable(let reason) = outcome {
            environment.logger.warning(
                "RTDN message \(message.messageId): voided purchase not recorded now (the nightly voided list will): \(reason)"
            )
        }
        return outcome == .recorded ? notice.orderId.map { [$0] } ?? [] : []
    }
}

/// The owner of `rtdn_message`.
enum RTDNMessageStore {
    /// Stores messages once each, in one statement (a redelivery is the same row, and so is the second of two in
    /// `messages`). Returns the ids of the messages that were new.
    static func insert(_ messages: [RTDNMessage], app: String, on connection: PostgresConnection) throws -> Set<String>
    {
        guard !messages.isEmpty else { return [] }
        let rows = try connection.query(
            """
            INSERT INTO rtdn_message (app_id, message_id, publish_time, kind, notification, handled_at)
            SELECT $1, i.message_id, i.publish_time, i.kind, i.notification::jsonb, now()
            FROM unnest($2::text[], $3::timestamptz[], $4::text[], $5::text[])
                WITH ORDINALITY AS i(message_id, publish_time, kind, notification, n)
            ORDER BY i.n
            ON CONFLICT (app_id, message_id) DO NOTHING
            RETURNING message_id
            """,
            [
                app, PostgresTextArray(messages.map(\.messageId)), PostgresArray(messages.map(\.publishTime)),
                PostgresTextArray(messages.map(\.kind.rawValue)),
                PostgresTextArray(messages.map { String(decoding: $0.notification, as: UTF8.self) }),
            ])
        return Set(try rows.map { try $0.decode("message_id", as: String.self) })
    }
}
