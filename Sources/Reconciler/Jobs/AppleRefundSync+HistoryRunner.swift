import AppStoreServerAPI
import Foundation
import Ledger
import RateLimiting

/// One customer's Refund History paged by the ``TokenChainPager``: one page at a time (the next call leaves once the
/// page before is stored), a refused revision read again from the start once, a chain paging in a circle refused, and
/// a page with a payload that failed verification stored without moving the revision, ending the chain. A stop
/// request is not fed: a customer's chain is read to its end, the stop checked between customers.
extension AppleRefundSync {
    /// A page of a customer's refund history, verified as it is answered.
    struct HistoryPage {
        var answer: RefundHistoryResponse
        var rows: [RefundRecord]
        var quarantined: [QuarantinedRow]
        /// A payload failed verification (see ``verify(_:from:customer:in:)``).
        var failed: Bool
    }

    typealias HistoryPager = TokenChainPager<HistoryPage>

    /// Pages one customer's refund history from `revision`; each page and the revision after it commit together.
    func readHistory(customer: String, revision start: String?, purpose: CallPurpose, in environment: JobEnvironment)
        async throws
    {
        var pager = HistoryPager(
            PageChain(
                app: app.id, api: .appleRefundHistory, name: "customer \(customer)", startingAt: start,
                maximumPages: PageChain.maximumApplePages),
            startingAt: start, overlap: false, setAside: .endChain)
        environment.counters.add("customers")
        var actions = pager.start()[...]
        while let action = actions.popFirst() {
            switch action {
            case .call(let revision):
                guard
                    let event = try await historyPage(
                        customer: customer, revision: revision, purpose: purpose, in: environment)
                else { return }
                actions += pager.handle(event)
            case .restart:
                environment.logger.warning("stored revision of customer \(customer) refused; reading from the start")
            case .prepare(let page):
                actions += pager.handle(.prepared(page, setAside: page.failed))
            case .store(let page, let store):
                try save(page, store, customer: customer, in: environment)
                actions += pager.handle(.stored)
            case .finish:
                return
            case .fail(let error):
                throw error
            }
        }
    }

    /// One call of a customer's refund history, its payloads verified, as the pager's event; nil when Apple does not
    /// know the customer or refuses its id as malformed (4000006): it is then finished at `revision` and not asked
    /// again, instead of failing every run.
    private func historyPage(
        customer: String, revision: String?, purpose: CallPurpose, in environment: JobEnvironment
    ) async throws -> HistoryPager.Event? {
        let answer: RefundHistoryResponse
        let answeredFrom: Environment
        do {
            (answer, answeredFrom) = try await access.client.refundHistory(
                transactionId: customer, revision: revision, purpose: purpose)
        } catch let error as AppStoreServerAPIError
            where error.apiErrorCode?.meansTransactionNotFound == true || error.apiErrorCode == .invalidTransactionId
        {
            environment.counters.add("unknown_customers")
            let code = error.apiErrorCode?.description ?? ""
            environment.logger.warning("customer \(customer) is unknown to the App Store (\(code)); not asked again")
            if !environment.dryRun { try cursors.finish(customer, revision: revision, on: environment.connection) }
            return nil
        } catch {
            let refused = (error as? AppStoreServerAPIError)?.apiErrorCode == .invalidRevision
            return .failed(error, tokenRefused: refused)
        }
        environment.counters.add("pages")
        UnreadableItems.report(
            answer.unreadableItems, page: "refund history of customer \(customer)", counters: environment.counters,
            logger: environment.logger)
        let (rows, quarantined, failed) = await verify(
            answer.signedTransactions, from: answeredFrom, customer: customer, in: environment)
        return .answered(
            HistoryPage(answer: answer, rows: rows, quarantined: quarantined, failed: failed),
            next: answer.hasMore ? answer.revision ?? "" : nil, rows: answer.signedTransactions.count)
    }

    /// Stores a page with the customer's place after it (a dry run counts what would be new), and shows progress.
    private func save(
        _ page: HistoryPage, _ store: HistoryPager.Store, customer: String, in environment: JobEnvironment
    ) throws {
        if environment.dryRun {
            environment.counters.add("would_insert", try ledger.countNew(page.rows, on: environment.connection))
            environment.counters.add("would_quarantine", page.quarantined.count)
        } else {
            try save(
                page.rows, quarantined: page.quarantined, customer: customer, failed: !store.movesCheckpoint,
                next: store.next != nil ? .more(page.answer.revision) : .done(page.answer.revision ?? store.asked),
                in: environment)
        }
        environment.progress?.update(
            "\(app.id) \(Self.job): \(environment.counters["customers"]) customers, "
                + "\(environment.counters["inserted"]) new refunds")
    }
}
