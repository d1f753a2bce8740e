import AppStoreServerAPI
import Foundation
import Ledger
import RateLimiting

/// Reading Notification History ahead of the job's task: calls and signature checks only, no database.
extension AppleRefundRequests {
    /// One chain of Notification History to read: a notification type over a window.
    struct HistoryWindow: Sendable {
        var type: NotificationTypeV2
        var start: Date
        var end: Date
        /// Where the requests that can still be answered begin (`CONSUMPTION_REQUEST`: Apple's 12 hours before the
        /// window's end); nil for the other types.
        var answerableFrom: Date?

        /// The parts read in turn, each a page chain of its own: the answerable requests first, then those already
        /// past their deadline (recorded `missed`), so that the first pages carry answers to send. Apple's history
        /// is oldest first: a first run's day back would otherwise begin with twelve hours of missed requests.
        var spans: [(start: Date, end: Date)] {
            guard let split = answerableFrom, split > start, split < end else { return [(start, end)] }
            return [(split, end), (start, split)]
        }
    }

    /// One page of Notification History, read and verified.
    struct HistoryPage: Sendable {
        var type: NotificationTypeV2
        /// The notifications whose payloads passed verification, with their transactions.
        var verified: [(VerifiedNotification, VerifiedTransaction)]
        /// Notifications on the page.
        var count: Int
        /// The payloads that failed verification, as quarantine entries.
        var setAside: [QuarantinedRow]
        /// Whether it is its chain's last page.
        var isLast: Bool
    }

    /// Reads each window's chain in turn (each of its spans in turn) and hands on each page as it is verified: a
    /// page's payloads are verified while the next page, when wanted already, is being fetched, and the pages are
    /// handed on in order.
    /// A `CONSUMPTION_REQUEST` page is read only once the job asks for it (``ReadAheadFeed/permit()``: it runs short
    /// of requests to answer): the answers go out at Apple's pace, so pages read further ahead would only take the
    /// cores from the other apps' first pages, whose answers set when their apps end. The outcomes' pages, read
    /// last, are read at once: the job stores them after its last answer and should not wait for them then.
    /// - Throws: `AppStoreServerAPIError` (a 401 at once), `QuotaError`, `ReconcilerError` (`.storeLoop`), or the
    ///   stop error when a stop was requested (checked before each page).
    func readHistory(
        _ windows: [HistoryWindow], shared: JobEnvironment.Shared, feed: ReadAheadFeed<HistoryPage>
    ) async throws {
        for window in windows {
            let spans = window.spans
            for (index, span) in spans.enumerated() {
                try await readSpan(
                    window.type, from: span.start, to: span.end, endsChain: index == spans.count - 1, shared: shared,
                    feed: feed)
            }
        }
    }

    /// Reads one span's page chain; its last page ends the window's chain when `endsChain`.
    private func readSpan(
        _ type: NotificationTypeV2, from start: Date, to end: Date, endsChain: Bool, shared: JobEnvironment.Shared,
        feed: ReadAheadFeed<HistoryPage>
    ) async throws {
        func newChain() -> PageChain {
            PageChain(
                app: app.id, api: .appleNotificationHistory, name: "\(type.rawValue) notifications", startingAt: nil,
                maximumPages: PageChain.maximumApplePages)
        }
        var chain = newChain()
        let request = NotificationHistoryRequest(startDate: start, endDate: end, notificationType: type)
        let paced = type == .consumptionRequest
        if paced { await feed.permit() }
        guard var page = try await fetchPage(request, after: nil, first: true, shared: shared) else { return }
        var mayRestart = true
        // The next page, or (Apple having refused the chain's token) the span's first page again, read once more.
        func take(_ next: SpanPage) {
            if next.restarted { (mayRestart, chain) = (false, newChain()) }
            page = next.page
        }
        while true {
            let token = try chain.follow(
                page.hasMore ? page.paginationToken ?? "" : nil, rows: page.notificationHistory.count)
            let last = endsChain && token == nil
            guard !paced || token == nil || feed.tryPermit() else {
                // The job has not asked for the next page yet: this one first, then the next when it asks.
                await pushVerified(page, type: type, isLast: last, shared: shared, feed: feed)
                await feed.permit()
                guard let next = try await fetchNext(request, after: token, mayRestart: mayRestart, shared: shared)
                else { return }
                take(next)
                continue
            }
            let restartable = mayRestart
            async let following = fetchNext(request, after: token, mayRestart: restartable, shared: shared)
            // On a database thread, a child task waits for this task's next suspension: let the call start first.
            await Task.yield()
            await pushVerified(page, type: type, isLast: last, shared: shared, feed: feed)
            guard let next = try await following else { return }
            take(next)
        }
    }

    /// Verifies a page's payloads and hands the page on.
    private func pushVerified(
        _ page: NotificationHistoryResponse, type: NotificationTypeV2, isLast: Bool, shared: JobEnvironment.Shared,
        feed: ReadAheadFeed<HistoryPage>
    ) async {
        let (verified, setAside) = await verifyPage(page, shared: shared)
        UnreadableItems.report(
            page.unreadableItems, page: "\(type.rawValue) notification history", counters: shared.counters,
            logger: shared.logger)
        feed.push(
            HistoryPage(
                type: type, verified: verified, count: page.notificationHistory.count, setAside: setAside,
                isLast: isLast))
    }

    /// A page of a span's chain, and whether it is the span's first page read again.
    struct SpanPage {
        var page: NotificationHistoryResponse
        var restarted = false
    }

    /// The chain's first page, or the page after `token` (nil when there is none), through the quota gate.
    private func fetchPage(
        _ request: NotificationHistoryRequest, after token: String?, first: Bool, shared: JobEnvironment.Shared
    ) async throws -> NotificationHistoryResponse? {
        guard first || token != nil else { return nil }
        if shared.shutdown.isRequested { throw StoppableQuotaGate.stopped }
        return try await access.client.notificationHistory(request, paginationToken: token, purpose: .incremental)
            .page
    }

    /// The page after `token`; when Apple refuses the token (4000014 invalid, 4000017 expired: a chain read at the
    /// pace of the answers may outlive it) and `mayRestart`, the span's first page again. The pages read before are
    /// read again and stored once (a request is keyed by its notification), so the requests after the refused
    /// token are not left to the next run, nearer their deadline.
    private func fetchNext(
        _ request: NotificationHistoryRequest, after token: String?, mayRestart: Bool, shared: JobEnvironment.Shared
    ) async throws -> SpanPage? {
        do {
            return try await fetchPage(request, after: token, first: false, shared: shared).map { SpanPage(page: $0) }
        } catch let error as AppStoreServerAPIError
            where mayRestart
            && (error.apiErrorCode == .paginationTokenExpired || error.apiErrorCode == .invalidPaginationToken)
        {
            shared.counters.add("history_restarts")
            shared.logger.warning("\(error); reading the notification history span again from its first page")
            return try await fetchPage(request, after: nil, first: true, shared: shared).map {
                SpanPage(page: $0, restarted: true)
            }
        }
    }

    /// The page's payloads that pass verification, and whether all did.
    private func verifyPage(
        _ page: NotificationHistoryResponse, shared: JobEnvironment.Shared
    ) async -> ([(VerifiedNotification, VerifiedTransaction)], [QuarantinedRow]) {
        var verified: [(VerifiedNotification, VerifiedTransaction)] = []
        var setAside: [QuarantinedRow] = []
        for item in page.notificationHistory {
            guard let signed = item.signedPayload else { continue }
            do {
                verified.append(try await verify(signed))
            } catch {
                shared.counters.add("verification_failed")
                let key = AppleRefundSync.notificationKey(signed)
                setAside.append(
                    QuarantinedRow(
                        job: .appleRefundRequests, naturalKey: key, raw: signed,
                        reason: "notification \(key): rejected, not stored: \(error)"))
            }
        }
        return (verified, setAside)
    }

    /// Verifies a notification and its transaction as the refund sync does.
    /// - Throws: the verifier's error, or `ReconcilerError` when the notification carries no transaction.
    func verify(_ signed: String) async throws -> (VerifiedNotification, VerifiedTransaction) {
        let verifier = try access.verifier(for: StoreClients.appleEnvironment(app))
        let notification = try await verifier.verifyNotification(signed)
        guard let inner = notification.payload.data?.signedTransactionInfo else {
            throw ReconcilerError(.failed, "the notification carries no signedTransactionInfo")
        }
        let transactionVerifier = try access.verifier(
            for: notification.payload.data?.environment ?? StoreClients.appleEnvironment(app))
        return (notification, try await transactionVerifier.verifyTransaction(inner))
    }
}
