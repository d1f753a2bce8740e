import AppStoreServerAPI
import Foundation
import Ledger
import Postgres

/// The job's side of the Notification History read ahead (``AppleRefundRequests/readHistory(_:shared:push:)``): stores
/// each page in its own transaction as it arrives, and a chain's checkpoint with its last page unless a payload of
/// that chain failed verification. Requests are stored between the answer groups (``RefundRequestFinder``); the
/// outcomes (`REFUND`, `REFUND_DECLINED`) are kept until the answers are out, then stored (``storeRest(in:)``).
struct AppleHistoryIntake: RefundRequestFinder {
    /// One chain's checkpoint and what its pages showed so far.
    struct Chain {
        var checkpoint: SyncCheckpoint
        /// The window's end: the checkpoint's next high-water mark.
        var end: Date
        /// No payload of the chain failed verification so far.
        var clean = true
    }

    let job: AppleRefundRequests
    let queue: ReadAheadQueue<AppleRefundRequests.HistoryPage>
    /// By notification type (raw value).
    var chains: [String: Chain]
    /// Outcome pages that arrived while the answers went out.
    private var parked: [AppleRefundRequests.HistoryPage] = []
    /// The `CONSUMPTION_REQUEST` chain's last page was taken (or the reading ended).
    private var requestsRead = false
    /// The quarantine held payloads of this job open when the run began: a verified copy closes them.
    let quarantineOpen: Bool

    init(
        job: AppleRefundRequests, queue: ReadAheadQueue<AppleRefundRequests.HistoryPage>, chains: [String: Chain],
        quarantineOpen: Bool
    ) {
        self.job = job
        self.queue = queue
        self.chains = chains
        self.quarantineOpen = quarantineOpen
    }

    /// Stores the request pages that arrived, first waiting for one when `waiting`; the next page is asked for when
    /// the answerer is `short` and no page came (or when it waits).
    mutating func storeFound(waiting: Bool, short: Bool, in environment: JobEnvironment) async throws -> FoundRequests {
        if waiting { queue.askForMore() }
        let pages = try await queue.take(waiting: waiting)
        if pages.isEmpty, short { queue.askForMore() }
        if pages.isEmpty, waiting {
            requestsRead = true
            return FoundRequests(stored: false, more: false)
        }
        var stored = false
        for page in pages {
            guard page.type == .consumptionRequest else {
                parked.append(page)
                requestsRead = true
                continue
            }
            stored = try store(page, in: environment) > 0 || stored
            if page.isLast { requestsRead = true }
        }
        return FoundRequests(stored: stored, more: !requestsRead)
    }

    func whenFound(_ wake: @escaping @Sendable () -> Void) {
        queue.observe(wake)
    }

    /// Stores the pages kept back and every page still to come, in order.
    /// - Throws: the reading's error once every page before it is stored, or the database's.
    mutating func storeRest(in environment: JobEnvironment) async throws {
        queue.unbound()
        for page in parked { _ = try store(page, in: environment) }
        parked = []
        while let page = try await queue.next() {
            _ = try store(page, in: environment)
        }
    }

    /// Stores one page (nothing in a dry run) with the payloads that failed verification set aside in the
    /// quarantine, and, with its chain's last page, the checkpoint when the chain is clean. Payloads that the
    /// quarantine has held for Apple's 12 hours (each failed the same way on every run since) stay there and no
    /// longer hold the chain: a request is past answering by then, and the window would be held for good. Until
    /// then each run reads them again, so a cause fixed within the 12 hours (a root certificate) lets them be
    /// answered without a `quarantine retry`. Returns how many requests were new.
    private mutating func store(_ page: AppleRefundRequests.HistoryPage, in environment: JobEnvironment) throws -> Int {
        environment.counters.add("notifications", page.count)
        guard var chain = chains[page.type.rawValue] else { return 0 }
        var clean = page.setAside.isEmpty
        if !clean, !environment.dryRun,
            try Quarantine.heldBefore(
                page.setAside, app: job.app.id, heldFor: RequestingStore.apple.answerWindow,
                on: environment.connection)
        {
            clean = true
            environment.logger.warning(
                "\(page.setAside.count) \(page.type.rawValue) notifications have failed verification for 12 hours; they stay in the quarantine and the window moves on"
            )
        }
        chain.clean = chain.clean && clean
        if page.isLast, chain.clean { chain.checkpoint.highWater = chain.end }
        chains[page.type.rawValue] = chain
        if environment.dryRun {
            for row in page.setAside { environment.logger.error("\(row.reason) (dry run: not set aside)") }
            return 0
        }
        return try environment.connection.transaction { connection in
            try Quarantine.record(
                page.setAside, app: job.app.id, runId: environment.runId, logger: environment.logger,
                counters: environment.counters, on: connection)
            let added = try job.storePage(
                page.verified, type: page.type, runId: environment.runId, counters: environment.counters,
                on: connection)
            if quarantineOpen {
                try Quarantine.resolveLanded(
                    job: .appleRefundRequests, app: job.app.id,
                    keys: page.verified.compactMap { $0.0.payload.notificationUUID }, note: "a verified copy landed",
                    on: connection)
            }
            if page.isLast, chain.clean { try chain.checkpoint.save(on: connection) }
            return added
        }
    }
}
