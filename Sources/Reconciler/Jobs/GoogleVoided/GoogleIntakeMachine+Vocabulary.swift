import Foundation
import Ledger
import PlayDeveloperAPI

/// What the ``GoogleIntakeMachine`` takes and returns.
extension GoogleIntakeMachine {
    typealias Paging = GoogleVoidedSync.PagerStateMachine

    /// When a page's orders are asked: the two ways a Google refund gets the store's amount.
    enum OrdersWay: Equatable {
        /// Before the page is stored: the page waits for these orders and is stored with their amounts, its
        /// refunds written once.
        case ahead([String])
        /// After the page is stored: its orders are settled against the ledger and queued for calls of 1000
        /// (``GoogleOrderAmounts/OrdersQueue``), their amounts written when the answer comes.
        case afterStoring
    }

    /// Something that happened: a child task's answer, or what an action the runner performed came to.
    enum Event {
        /// A voided call ended, at `at` (dates a restarted slice against what Google keeps).
        case pageAnswered(GoogleVoidedSync.Answer, at: Date)
        /// The orders of ``KnownOrdersLookup/ids`` that the ledger knows (those are asked after storing).
        case knownOrdersFound(KnownOrdersLookup, known: Set<String>)
        /// An Orders call made after storing was answered.
        case ordersAnswered(GoogleOrderAmounts.OrdersAnswer)
        /// An Orders call made ahead, for a page that waits, was answered.
        case ordersAnsweredAhead(GoogleVoidedSync.AheadAnswer)
        /// An Orders answer was stored (``Action/storeOrders(_:)``).
        case ordersStored(GoogleOrderAmounts.OrdersAnswer, GoogleOrderAmounts.Outcome)
        /// A page was stored (``Action/storePage(_:)``), with what storing it did.
        case pageStored(PageStore, StoredPage)
        /// A dry run counted this many rows of a page as new.
        case newCounted(Int)
        /// A stop was requested (a signal).
        case stopRequested
    }

    /// What the runner must do, in order.
    enum Action {
        /// Make the voided call; `prepare`: make its page's batch ready to write in the call's task (not when its
        /// orders will likely be asked ahead: the priced rows are made ready then).
        case launchPage(Paging.Call, prepare: Bool)
        /// Find which of a page's orders the ledger knows, answered by ``Event/knownOrdersFound(_:known:)``.
        case lookUpKnownOrders(KnownOrdersLookup)
        /// Ask for a waiting page's orders, answered by ``Event/ordersAnsweredAhead(_:)``.
        case askOrdersAhead(AheadCall)
        /// Make one `orders.batchget` call for orders of stored pages, answered by ``Event/ordersAnswered(_:)``.
        case askOrders([String])
        /// Store a page, its slice row and checkpoint in one transaction, with its batch and its orders priced
        /// ahead; then settle ``PageStore/afterStoring``. Answered by ``Event/pageStored(_:_:)``.
        case storePage(PageStore)
        /// A dry run counts what would be new instead of storing; answered by ``Event/newCounted(_:)``.
        case countNew([RefundRecord])
        /// Store an Orders answer's amounts; answered by ``Event/ordersStored(_:_:)``.
        case storeOrders(GoogleOrderAmounts.OrdersAnswer)
        /// Save the slice read again from its start; `gap` is the part older than Google keeps.
        case restart(VoidedSlice, gap: DateInterval?)
        /// Save the slice cut short and a part cut off it in one transaction (`pagesLeft` of the cut slice and of all,
        /// for the log).
        case split(kept: VoidedSlice, added: VoidedSlice, pagesLeft: Double, allPagesLeft: Double)
        /// Forget the window's slices and save this checkpoint.
        case closeWindow(SyncCheckpoint)
        /// End the voided calls still waiting or travelling (the first error).
        case cancelPageCalls
        /// Show the progress line (with ``GoogleIntakeMachine/summary`` as it is then).
        case progress(fraction: Double?)
    }

    /// A page whose orders may be asked ahead: these of its orders, unless the ledger knows them.
    struct KnownOrdersLookup {
        var answer: GoogleVoidedSync.Answer
        var at: Date
        var ids: [String]
    }

    /// The Orders call for a page that waits (``Paging/HeldPage``), numbered `page`.
    struct AheadCall {
        var page: Int
        var ids: [String]
        var answer: GoogleVoidedSync.Answer
    }

    /// A page to store, and everything that goes with it.
    struct PageStore {
        var write: Paging.PageWrite
        /// The page's rows made ready to write in a task (``RefundLedger/prepare(_:runId:)``), of exactly
        /// `write.records`; nil when they are made ready at the store.
        var batch: RefundLedger.Prepared?
        /// The page's orders asked ahead: those priced plainly are stored in the page's transaction, the rest
        /// right after it.
        var pricedAhead: GoogleOrderStore.PricedAhead?
        /// The page's orders that take the ``OrdersWay/afterStoring`` way: settled once the page is stored, then
        /// queued.
        var afterStoring: [String]
    }

    /// What storing a page did.
    struct StoredPage {
        var inserted = 0
        var updated = 0
        /// The orders of its call ahead stored after it (their refunds priced, pending).
        var rest = GoogleOrderAmounts.Summary()
        /// Of ``PageStore/afterStoring``, the orders still needing the store's amount once settled.
        var toAsk: [String] = []
        /// Rows priced ahead that were written without their amount: another process stored their order meanwhile.
        var demotedRows = 0
    }

    /// What a page's batch and priced orders are, between its answer and its store.
    struct Readied {
        var batch: RefundLedger.Prepared?
        var priced: GoogleOrderStore.PricedAhead?
    }
}

extension GoogleVoidedSync {
    /// A voided page that waited for its orders: priced when the call succeeded, else as it came with the error.
    struct AheadAnswer: Sendable {
        var page: Answer
        /// The page's number, under which the ``PagerStateMachine`` holds it.
        var number: Int
        var ids: [String]
        var priced: GoogleOrderStore.PricedAhead?
        var error: (any Error)?
    }
}
