import Foundation
import Ledger
import Postgres

/// The recheck job's SQL: claiming due subscriptions with a lease under `FOR UPDATE SKIP LOCKED`, and writing what
/// a status answer said, with its transitions, in one transaction per subscription.
struct RecheckStore: Sendable {
    let app: String
    let classifier: TransitionClassifier
    let runId: Int64?

    /// Claims the listed subscriptions that nobody checked since they were listed and nobody holds a lease on; rows
    /// another process has locked are skipped, not waited for.
    func claim(
        _ due: [RecheckPlanner.Due], now: Date, leaseUntil: Date, claimer: String, on connection: PostgresConnection
    ) throws -> [StoredSubscription] {
        guard !due.isEmpty else { return [] }
        let rows = try SubscriptionLedger.claim(
            ids: due.map(\.id), seenMicros: due.map(\.seenMicros), now: now, leaseUntil: leaseUntil,
            claimer: claimer, returning: StoredSubscription.columns, on: connection)
        return try rows.map(StoredSubscription.init(row:)).sorted { $0.id < $1.id }
    }

    /// Reads the listed subscriptions without claiming them (`--dry-run`).
    func load(_ due: [RecheckPlanner.Due], on connection: PostgresConnection) throws -> [StoredSubscription] {
        guard !due.isEmpty else { return [] }
        return try connection.query(
            "SELECT \(StoredSubscription.columns) FROM subscription WHERE id = ANY($1::bigint[]) ORDER BY id",
            [PostgresTextArray(due.map { String($0.id) })]
        ).map(StoredSubscription.init(row:))
    }

    /// Gives back leases of subscriptions this process claimed but did not get to (a stop or an outage).
    func release(_ ids: [Int64], claimer: String, on connection: PostgresConnection) throws {
        try SubscriptionLedger.release(ids, claimer: claimer, on: connection)
    }

    /// Writes what a status answer said about one subscription (nothing when `dryRun`), clears its recheck request
    /// made before `askedAt` (when the store was asked; `now` by default), and returns the transitions recorded. The
    /// row is read again under lock, so a change made since it was claimed (a replacement found through another
    /// token) is respected.
    func apply(
        _ reading: StatusReading, to claimed: StoredSubscription, now: Date, askedAt: Date? = nil, dryRun: Bool,
        on connection: PostgresConnection
    ) throws -> [RecordedTransition] {
        try connection.transaction { connection in
            let current = try reload(claimed, lock: !dryRun, on: connection) ?? claimed
            // The ledger revoked the subscription while the store was asked (a voided refund of its current order
            // stored meanwhile): an answer that still grants was most likely given before the store revoked it.
            // The row stays revoked and is asked again next run.
            if case .observed(let observation) = reading, observation.entitled, claimed.state != .revoked,
                current.state == .revoked
            {
                if !dryRun {
                    try SubscriptionLedger.askAgain(current.id, reason: "revoked_while_asked", on: connection)
                }
                return []
            }
            if !dryRun {
                try RecheckRequests.clear(
                    app: app, storeId: current.storeId, after: reading, askedAt: askedAt ?? now, on: connection)
            }
            switch reading {
            case .observed(let observation):
                return try record(observation, for: current, now: now, dryRun: dryRun, on: connection)
            case .missing:
                return try recordMissing(current, now: now, dryRun: dryRun, on: connection)
            case .unknownState(let raw):
                // Kept raw and reported; nothing else changes, and the lease stays (held by no session now, so it
                // runs out by time) so no one asks again this run.
                if !dryRun { try SubscriptionLedger.keepUnknownState(current.id, raw: raw, on: connection) }
                return []
            case .badAnswer:
                if !dryRun { try SubscriptionLedger.dropBackend(current.id, on: connection) }
                return []
            }
        }
    }

    private func reload(_ claimed: StoredSubscription, lock: Bool, on connection: PostgresConnection) throws
        -> StoredSubscription?
    {
        let rows = try connection.query(
            "SELECT \(StoredSubscription.columns) FROM subscription WHERE id = $1\(lock ? " FOR UPDATE" : "")",
            [claimed.id])
        return try rows.first.map(StoredSubscription.init(row:))
    }

    private func record(
        _ answer: StatusObservation, for old: StoredSubscription, now: Date, dryRun: Bool,
        on connection: PostgresConnection
    ) throws -> [RecordedTransition] {
        var transitions: [RecordedTransition] = []
        var observation = TransitionClassifier.settle(
            old, answer, currentOrderRefunded: try currentOrderRefunded(answer, on: connection))
        var replacedProduct: String?
        var chainRoot = old.chainRootStoreId
        if let linked = observation.linkedStoreId, linked != old.storeId {
            let replaced = try replace(
                linked, by: old, product: observation.productId, now: now, dryRun: dryRun,
                on: connection)
            replacedProduct = replaced.productId
            chainRoot = replaced.chainRoot
            transitions += replaced.transitions
        } else {
            observation.linkedStoreId = old.linkedStoreId
        }
        let kind = classifier.classify(old, observation, replacedProductId: replacedProduct)
        let expiryMoved = !TransitionClassifier.sameInstant(old.expiresAt, observation.expiresAt)
        if !dryRun {
            try SubscriptionLedger.record(
                SubscriptionLedger.Observed(
                    id: old.id, state: observation.state.rawValue, storeState: observation.storeState,
                    entitled: observation.entitled, expiresAt: observation.expiresAt, autoRenew: observation.autoRenew,
                    autoRenewProductId: observation.autoRenewProductId, productId: observation.productId,
                    orderId: observation.orderId, environment: observation.environment,
                    linkedStoreId: observation.linkedStoreId, chainRootStoreId: chainRoot, expiryMoved: expiryMoved,
                    checkedAt: now),
                on: connection)
        }
        if let kind {
            let transition = RecordedTransition(
                subscriptionId: old.id, storeId: old.storeId, oldState: old.state, newState: observation.state,
                kind: kind, oldExpiresAt: old.expiresAt, newExpiresAt: observation.expiresAt,
                oldProductId: old.productId, newProductId: observation.productId ?? old.productId,
                orderId: observation.orderId)
            try insert(transition, observed: observation, now: now, dryRun: dryRun, on: connection)
            transitions.append(transition)
        }
        return transitions
    }

    /// Whether the ledger holds an unreversed refund of the order an ended subscription's answer calls current.
    private func currentOrderRefunded(_ answer: StatusObservation, on connection: PostgresConnection) throws -> Bool {
        guard answer.state == .expired, let order = answer.orderId else { return false }
        return try !connection.query(
            "SELECT 1 FROM refund WHERE app_id = $1 AND order_id = $2 AND reversed_at IS NULL LIMIT 1", [app, order]
        ).isEmpty
    }

    /// Google `linkedPurchaseToken`: the old token stops granting at once and points at its successor; the new
    /// row joins the old one's chain. An old token storerecon never saw is created, already replaced, so a refund
    /// of one of its orders is still attributed to the chain.
    private func replace(
        _ oldToken: String, by successor: StoredSubscription, product: String?, now: Date, dryRun: Bool,
        on connection: PostgresConnection
    ) throws -> (productId: String?, chainRoot: String, transitions: [RecordedTransition]) {
        let rows = try connection.query(
            "SELECT \(StoredSubscription.columns) FROM subscription WHERE app_id = $1 AND store_id = $2"
                + (dryRun ? "" : " FOR UPDATE"),
            [app, oldToken])
        guard let previous = try rows.first.map(StoredSubscription.init(row:)) else {
            if !dryRun {
                try SubscriptionLedger.insertReplaced(
                    app: app, storeId: oldToken, productId: product ?? successor.productId, by: successor.storeId,
                    now: now, on: connection)
            }
            return (nil, oldToken, [])
        }
        let root = previous.chainRootStoreId ?? previous.storeId
        if previous.state == .unknown {
            try markUnanswered(previous, replacedBy: successor, root: root, now: now, dryRun: dryRun, on: connection)
            return (previous.productId, root, [])
        }
        var transitions: [RecordedTransition] = []
        if previous.state != .replaced || previous.entitled || previous.replacedByStoreId != successor.storeId {
            if !dryRun {
                try SubscriptionLedger.markReplaced(
                    previous.id, by: successor.storeId, root: root, on: connection)
            }
            if previous.state != .replaced {
                let transition = RecordedTransition(
                    subscriptionId: previous.id, storeId: previous.storeId, oldState: previous.state,
                    newState: .replaced, kind: .replaced, oldExpiresAt: previous.expiresAt,
                    newExpiresAt: previous.expiresAt, oldProductId: previous.productId,
                    newProductId: previous.productId, orderId: nil)
                try insert(
                    transition, detail: ["replaced_by": successor.storeId], now: now, dryRun: dryRun, on: connection)
                transitions.append(transition)
            }
        }
        return (previous.productId, root, transitions)
    }

    /// A token the stores never answered for yet (state `unknown`) that a successor names: it stops granting and
    /// joins the chain at once, but its state and its first transition wait for its own answer (flagged, so it is
    /// due tonight or next night), which `settle` keeps replaced. Whichever of the two tokens a recheck reaches
    /// first, and wherever a crash cuts between them, the log then reads the same: one `first_seen` to replaced
    /// with the old token's own order.
    private func markUnanswered(
        _ previous: StoredSubscription, replacedBy successor: StoredSubscription, root: String, now: Date,
        dryRun: Bool, on connection: PostgresConnection
    ) throws {
        guard !dryRun else { return }
        try SubscriptionLedger.markUnanswered(
            previous.id, replacedBy: successor.storeId, root: root, now: now, on: connection)
    }

    private func recordMissing(
        _ old: StoredSubscription, now: Date, dryRun: Bool, on connection: PostgresConnection
    ) throws -> [RecordedTransition] {
        if !dryRun { try SubscriptionLedger.recordMissing(old.id, now: now, on: connection) }
        guard old.state != .missing else { return [] }
        let transition = RecordedTransition(
            subscriptionId: old.id, storeId: old.storeId, oldState: old.state, newState: .missing, kind: .missing,
            oldExpiresAt: old.expiresAt, newExpiresAt: old.expiresAt, oldProductId: old.productId,
            newProductId: old.productId, orderId: nil)
        try insert(transition, now: now, dryRun: dryRun, on: connection)
        return [transition]
    }

    private func insert(
        _ transition: RecordedTransition, observed: StatusObservation, now: Date, dryRun: Bool,
        on connection: PostgresConnection
    ) throws {
        var detail: [String: String] = ["store_state": observed.storeState]
        if let autoRenew = observed.autoRenew { detail["auto_renew"] = autoRenew ? "true" : "false" }
        if let next = observed.autoRenewProductId { detail["auto_renew_product_id"] = next }
        if let environment = observed.environment { detail["environment"] = environment }
        try insert(transition, detail: detail, now: now, dryRun: dryRun, on: connection)
    }

    private func insert(
        _ transition: RecordedTransition, detail: [String: String] = [:], now: Date, dryRun: Bool,
        on connection: PostgresConnection
    ) throws {
        guard !dryRun else { return }
        let json = try JSONSerialization.data(withJSONObject: detail, options: [.sortedKeys])
        try SubscriptionLedger.insert(
            SubscriptionLedger.Transition(
                subscriptionId: transition.subscriptionId, oldState: transition.oldState.rawValue,
                newState: transition.newState.rawValue, classification: transition.kind.rawValue,
                oldExpiresAt: transition.oldExpiresAt, newExpiresAt: transition.newExpiresAt,
                oldProductId: transition.oldProductId, newProductId: transition.newProductId,
                orderId: transition.orderId, runId: runId, observedAt: now, detail: json),
            on: connection)
    }
}
