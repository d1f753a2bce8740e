import AppStoreServerAPI
import Foundation
import Ledger
import Logging
import Postgres
import RateLimiting
import Synchronization

extension AppleRefundSync {
    /// How long a claimed customer stays reserved for the session that claimed it after the claim or its last page
    /// stored (a crashed worker's claim is free as soon as its database session is gone, and runs out after this in
    /// any case).
    static let leaseSeconds = 300

    /// Reads the refund history of the queued customers of `kind`, oldest queued first, at most `limit` of them.
    func drainQueue(
        _ kind: ClaimKind = .queued, limit: Int? = nil, purpose: CallPurpose, in environment: JobEnvironment
    ) async throws {
        // A customer given back this run (its page failed verification) stays queued for the next run.
        let startedAt = try databaseNow(environment)
        let slots = SharedCount()
        try await withReaders(in: environment) { reader in
            // A slot is taken before the claim, so the readers together never read more than `limit` customers.
            while limit.map({ slots.next(below: $0) != nil }) ?? true,
                let (customer, revision) = try claim(kind, notCheckedSince: startedAt, in: reader)
            {
                try await readHistorySafely(customer: customer, revision: revision, purpose: purpose, in: reader)
                if kind == .backfill { reader.counters.add("backfill_customers") }
            }
        }
    }

    /// Re-reads up to `limit` customers no notification named and not read within `sync.appleRecheckAfter`, the
    /// longest unchecked first (each customer's ids share one read).
    func sweep(limit: Int, in environment: JobEnvironment) async throws {
        let startedAt = try databaseNow(environment)
        let slots = SharedCount()
        try await withReaders(in: environment) { reader in
            // A slot is taken before the claim, so the readers together never read more than `limit` customers.
            while slots.next(below: limit) != nil,
                let (customer, revision) = try claim(.sweep, notCheckedSince: startedAt, in: reader)
            {
                try await readHistorySafely(customer: customer, revision: revision, purpose: .incremental, in: reader)
                reader.counters.add("swept")
            }
        }
    }

    /// Runs `read` in `sync.appleConcurrency` readers at once, each on a database connection of its own (claims,
    /// pages and their revisions commit on the reader's connection; the job's own connection keeps the job lock).
    /// The first reader to fail stops the others (they give back the customer in hand) and its error is the run's.
    /// A dry run reads with one reader on the job's connection: it claims nothing, so readers could not split the work.
    func withReaders(
        in environment: JobEnvironment, _ read: @escaping @Sendable (JobEnvironment) async throws -> Void
    ) async throws {
        let readers = environment.dryRun ? 1 : configuration.sync.appleConcurrency
        guard readers > 1 else { return try await read(environment) }
        let shared = environment.shared
        let conninfo = configuration.database.url
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<readers {
                group.addTask {
                    let connection = try PostgresConnection(conninfo: conninfo)
                    defer { connection.close() }
                    try await read(shared.environment(on: connection))
                }
            }
            try await group.waitForAll()
        }
    }

    /// The database's clock: `last_checked_at` is written with it, so "not checked since this run began" must
    /// compare against it too.
    func databaseNow(_ environment: JobEnvironment) throws -> Date {
        try environment.connection.query("SELECT clock_timestamp() AS now")[0].decode("now")
    }

    /// Claims the next customer for this process: `FOR UPDATE SKIP LOCKED` picks a row no other process is claiming,
    /// and the lease keeps it reserved while its pages are read and committed one by one.
    func claim(_ kind: ClaimKind, notCheckedSince: Date?, in environment: JobEnvironment) throws -> (String, String?)? {
        try environment.checkShutdown()
        try Task.checkCancellation()
        let seconds = recheckSeconds
        if environment.dryRun {
            // A dry run reserves nothing; it reads the queue as it stands, once per customer.
            let seen = environment.counters.seenCustomers
            guard
                let next = try cursors.peek(kind, excluding: seen, recheckSeconds: seconds, on: environment.connection)
            else { return nil }
            environment.counters.markSeen(next.0)
            return next
        }
        return try cursors.claim(
            kind, worker: "\(ProcessInfo.processInfo.hostName):\(getpid())", leaseSeconds: Self.leaseSeconds,
            notCheckedSince: notCheckedSince, recheckSeconds: seconds, on: environment.connection)
    }

    /// Reads one customer; on any failure the customer is given back (still queued, revision unchanged) so no
    /// lease outlives this process's interest in it. A store error about this customer alone (an error status, or an
    /// answer that is not the JSON Apple documents) is counted and the run goes on with the next one; so is Apple's "not found, retryable" (4040002/4/6) once its retries are spent
    /// (the customer is asked again next run). Quota answers, outages, refused credentials (401, thrown as
    /// `.configuration`) and database errors stop the run.
    func readHistorySafely(
        customer: String, revision: String?, purpose: CallPurpose, in environment: JobEnvironment
    ) async throws {
        do {
            try await readHistory(customer: customer, revision: revision, purpose: purpose, in: environment)
        } catch let error as AppStoreServerAPIError
            where !error.isRetryable && (error.code == .apiError || error.code == .invalidResponse)
        {
            environment.counters.add("customer_errors")
            environment.logger.error("customer \(customer): \(error); left queued for the next run")
            if !environment.dryRun { try cursors.release(customer, on: environment.connection) }
        } catch let error as ReconcilerError where error.code == .storeLoop {
            // One customer's history paging in a circle: the pages before it are stored; the others go on.
            environment.counters.add("customer_errors")
            environment.logger.error("\(error); left queued for the next run")
            if !environment.dryRun { try cursors.release(customer, on: environment.connection) }
        } catch let error as AppStoreServerAPIError
            where error.httpStatus == 404 && error.apiErrorCode?.isRetryableNotFound == true
        {
            environment.counters.add("customers_retry_later")
            environment.logger.warning("customer \(customer): \(error); still retryable, left queued for the next run")
            if !environment.dryRun { try cursors.release(customer, on: environment.connection) }
        } catch {
            if !environment.dryRun, environment.connection.isOpen {
                try? cursors.release(customer, on: environment.connection)
            }
            throw error
        }
    }

    /// Where a customer's history stands after a page.
    enum PageEnd {
        /// More pages follow from this revision.
        case more(String?)
        /// The history is read up to this revision.
        case done(String?)
    }

    /// Verifies a page's signed transactions one by one and maps them to ledger rows. A payload that fails
    /// verification, or a revocation the ledger cannot take, is set aside for the quarantine (never stored in the
    /// ledger); the others are kept. `failed` says a payload failed verification: the customer's revision then stays
    /// where it was, so the next run reads the page again (a payload spoiled on its way heals itself, and its
    /// quarantined copy is closed when the genuine one lands; a forged one stays in the quarantine).
    func verify(_ signed: [String], from answeredFrom: Environment, customer: String, in environment: JobEnvironment)
        async -> (rows: [RefundRecord], quarantined: [QuarantinedRow], failed: Bool)
    {
        var failed = false
        var rows: [RefundRecord] = []
        var quarantined: [QuarantinedRow] = []
        let context = ["environment": answeredFrom.rawValue, "customer": customer]
        for payload in signed {
            do {
                let verified = try await access.verifier(for: answeredFrom).verifyTransaction(payload)
                switch RefundRecord.intake(verified, signed: payload) {
                case .refund(let row):
                    rows.append(row)
                case .notARefund:
                    break
                case .unstorable(let reason):
                    quarantined.append(
                        QuarantinedRow(
                            job: .appleRefunds, naturalKey: verified.payload.transactionId, raw: payload,
                            reason: "customer \(customer): \(reason)", context: context))
                }
            } catch {
                failed = true
                environment.counters.add("verification_failed")
                quarantined.append(
                    QuarantinedRow(
                        job: .appleRefunds, naturalKey: RefundRecord.claimedTransactionId(payload), raw: payload,
                        reason: "customer \(customer): the signed transaction failed verification: \(error)",
                        context: context))
            }
        }
        environment.counters.add("rows_fetched", rows.count)
        return (rows, quarantined, failed)
    }

    /// Stores a page's refunds (odd rows to the quarantine) and the customer's place after it in one transaction.
    func save(
        _ rows: [RefundRecord], quarantined: [QuarantinedRow], customer: String, failed: Bool,
        next: PageEnd, in environment: JobEnvironment
    ) throws {
        try environment.connection.transaction { connection in
            let counts = try ledger.write(
                rows, quarantined: quarantined, job: .appleRefunds, runId: environment.runId,
                logger: environment.logger, counters: environment.counters, on: connection)
            environment.counters.add("inserted", counts.0)
            environment.counters.add("updated", counts.1)
            // The chain returned other ids' refunds: they are this customer's, and this chain serves them too.
            try cursors.mergeCustomers(rows.map(\.originalId), into: customer, on: connection)
            switch next {
            case _ where failed:
                // Keep the old revision: the next run reads this page again and verifies it again.
                try cursors.release(customer, on: connection)
            case .more(let revision):
                try cursors.advance(customer, to: revision, leaseSeconds: Self.leaseSeconds, on: connection)
            case .done(let revision):
                try cursors.finish(customer, revision: revision, on: connection)
            }
        }
    }

    /// Verifies, decodes and stores pages of signed refund transactions already in hand, exactly as Refund History
    /// pages are (each page with its customer's revision in one transaction), on `sync.appleConcurrency` readers. No
    /// store call is made. `scripts/bench` times this stage apart from the store's HTTP with it.
    /// - Returns: the refunds stored (new or changed).
    public func store(pages: [[String]], from answeredFrom: Environment, in environment: JobEnvironment) async throws
        -> Int
    {
        let taken = SharedCount()
        try await withReaders(in: environment) { reader in
            while let index = taken.next(below: pages.count) {
                let page = pages[index]
                let customer = "page \(index)"
                let (rows, quarantined, failed) = await verify(
                    page, from: answeredFrom, customer: customer, in: reader)
                try save(
                    rows, quarantined: quarantined, customer: rows.first?.originalId ?? customer,
                    failed: failed, next: .done(nil), in: reader)
            }
        }
        return environment.counters["inserted"] + environment.counters["updated"]
    }
}

/// A count shared by readers, handing out 0, 1, 2, …: a sweep's slots, or the pages to store.
final class SharedCount: Sendable {
    private let count = Mutex(0)

    /// The next number below `end`; nil once all are taken.
    func next(below end: Int) -> Int? {
        count.withLock { next in
            guard next < end else { return nil }
            defer { next += 1 }
            return next
        }
    }
}
