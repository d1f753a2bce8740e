import AppStoreServerAPI
import Foundation
import Ledger

/// Does what the ``TokenChainPager`` decides for one type's Notification History window: its calls are child tasks of
/// one task group (the next one travelling while a page is verified and stored), its pages are verified and stored
/// on the job's connection, and what each action comes to goes back to the pager as an event. A stop request,
/// polled before each event, too. The runner decides nothing.
extension AppleRefundSync {
    /// A page of notifications: the store's answer, then its notifications verified and sorted.
    struct DiscoveryPage {
        var answer: NotificationHistoryResponse
        var notified = NotifiedPage()
    }

    typealias DiscoveryPager = TokenChainPager<DiscoveryPage>

    /// One type's window as it is paged.
    struct Discovery {
        var type: NotificationTypeV2
        var request: NotificationHistoryRequest
        var window: (start: Date, end: Date)
        var now: Date
        /// The checkpoint as loaded; each stored page moves it.
        var checkpoint: SyncCheckpoint
    }

    /// Pages the window until the pager finishes.
    /// - Throws: the chain's first error, or the stop (``StoppableQuotaGate/stopped``) when a stop left it unfinished.
    func page(_ discovery: Discovery, with start: DiscoveryPager, in environment: JobEnvironment) async throws {
        var (pager, discovery) = (start, discovery)
        try await withThrowingTaskGroup(of: Result<NotificationHistoryResponse, any Error>.self) { group in
            func feed(_ event: DiscoveryPager.Event) -> [DiscoveryPager.Action] {
                let stop = environment.shutdown.isRequested ? pager.handle(.stopRequested) : []
                return stop + pager.handle(event)
            }
            var actions = pager.start()[...]
            while true {
                while let action = actions.popFirst() {
                    switch action {
                    case .call(let token):
                        let request = discovery.request
                        group.addTask { [self] in
                            do { return .success(try await notifications(request, token: token)) } catch {
                                return .failure(error)
                            }
                        }
                    case .restart:
                        environment.logger.warning("the notification-history token was refused; restarting the window")
                    case .prepare(let page):
                        var notified = await verifiedPage(
                            page.answer, type: discovery.type, now: discovery.now, in: environment)
                        if notified.setAside,
                            try Quarantine.heldBefore(notified.unverified, app: app.id, on: environment.connection)
                        {
                            // Each failed the same way on an earlier run: reading the page again will not mend them,
                            // and holding the checkpoint for them would hold it for good. The quarantine keeps them.
                            notified.setAside = false
                            environment.logger.warning(
                                "\(notified.unverified.count) notifications failed verification again; they stay in the quarantine and the window moves on"
                            )
                        }
                        actions += feed(
                            .prepared(
                                DiscoveryPage(answer: page.answer, notified: notified), setAside: notified.setAside))
                    case .store(let page, let store):
                        discovery.checkpoint = try self.store(page.notified, store, of: discovery, in: environment)
                        actions += feed(.stored)
                    case .finish(let outcome):
                        if outcome == .stopped { throw StoppableQuotaGate.stopped }
                        return
                    case .fail(let error):
                        throw error
                    }
                }
                guard let answered = try await group.next() else { return }
                actions += feed(Self.event(answered))
            }
        }
    }

    /// A call's result as the pager's event: a refused token is one Apple names expired or invalid.
    private static func event(_ result: Result<NotificationHistoryResponse, any Error>) -> DiscoveryPager.Event {
        switch result {
        case .success(let answer):
            return .answered(
                DiscoveryPage(answer: answer), next: answer.hasMore ? answer.paginationToken ?? "" : nil,
                rows: answer.notificationHistory.count)
        case .failure(let error):
            let code = (error as? AppStoreServerAPIError)?.apiErrorCode
            return .failed(error, tokenRefused: code == .paginationTokenExpired || code == .invalidPaginationToken)
        }
    }

    /// Stores a page with the checkpoint after it (saved unless a page was set aside); a dry run counts what would
    /// be new.
    /// - Returns: the checkpoint after the page.
    private func store(
        _ notified: NotifiedPage, _ store: DiscoveryPager.Store, of discovery: Discovery, in environment: JobEnvironment
    ) throws -> SyncCheckpoint {
        if environment.dryRun {
            environment.counters.add("would_insert", try ledger.countNew(notified.refunds, on: environment.connection))
            return discovery.checkpoint
        }
        let checkpoint = Self.advanced(discovery.checkpoint, window: discovery.window, next: store.next)
        try storeNotified(
            notified, type: discovery.type, checkpoint: store.movesCheckpoint ? checkpoint : nil, in: environment)
        return checkpoint
    }
}
