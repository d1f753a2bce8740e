import Foundation
import Ledger
import Logging
import Postgres

/// The RTDN messages that are not refund reviews: a voided purchase is recorded in the ledger when it comes, a
/// subscription change queues the subscription for the next recheck (docs/refund-requests.md, "Other RTDN
/// messages"). Each is handled once, in the transaction that stores the message the first time; a redelivery or a
/// duplicate finds the message stored and changes nothing.
extension GoogleRefundRequests {
    /// What a voided-purchase notification did to the ledger.
    enum VoidedOutcome: Equatable {
        /// A new row.
        case recorded
        /// The order's row was there already (the voided list, or an earlier notification, came first): left as it
        /// is, the list's row being the richer.
        case known
        /// A partial or unknown refund type: the nightly voided list records it.
        case leftToNightly
        /// The ledger cannot take it, with the reason.
        case unstorable(String)

        /// The run's counter.
        var counter: String {
            switch self {
            case .recorded: "voided_recorded"
            case .known: "voided_known"
            case .leftToNightly: "voided_left_to_nightly"
            case .unstorable: "voided_unstorable"
            }
        }
    }

    /// Records a voided-purchase notification in the ledger, inside the caller's transaction, unless its row is
    /// there already: the voided list's row (its reason, source and voided time) is never overwritten, also when the
    /// nightly sync stores it while this transaction runs.
    static func record(
        _ notice: RefundRecord.VoidedNotice, payload: Data, ledger: RefundLedger, runId: Int64?, now: Date,
        logger: Logger, counters: (any LedgerCounters)?, on connection: PostgresConnection
    ) throws -> VoidedOutcome {
        switch RefundRecord.voided(notice, payload: payload, receivedAt: now) {
        case .refund(let record):
            let (inserted, _) = try ledger.write(
                [record], quarantined: [], job: .googleVoided, runId: runId, keepingStored: true, logger: logger,
                counters: counters, on: connection)
            return inserted == 1 ? .recorded : .known
        case .notARefund: return .leftToNightly
        case .unstorable(let reason): return .unstorable(reason)
        }
    }

    /// After the batch committed, for the orders whose refunds it recorded: a refund without revocation of the same
    /// order (seen in the order's history before) is dropped, the void now holds that money; and an order the
    /// Orders API already showed fully refunded prices its row at once from what it said. Any other row keeps its
    /// estimate until the voided sync's backlog asks the Orders API (it asks for every row without a store amount).
    func settleRecorded(_ orderIds: [String], in environment: JobEnvironment) throws {
        guard !orderIds.isEmpty else { return }
        let orders = GoogleOrderStore(appId: app.id, prices: ledger.prices)
        _ = try orders.settleVoided(orderIds, on: environment.connection)
        // Only an answer that already shows the refund: pricing from an older one would mark the order fetched now
        // and keep the backlog from asking again.
        let refunded: [String] = try environment.connection.query(
            """
            SELECT order_id FROM google_order
            WHERE app_id = $1 AND order_id = ANY ($2::text[]) AND status = 'ok' AND state = 'REFUNDED'
            """, [app.id, PostgresTextArray(orderIds)]
        ).map { try $0.decode("order_id") }
        for orderId in refunded {
            _ = try orders.reprice(orderId: orderId, logger: environment.logger, on: environment.connection)
        }
    }
}
