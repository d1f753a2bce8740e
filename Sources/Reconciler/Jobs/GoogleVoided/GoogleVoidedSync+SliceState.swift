import Foundation
import Ledger
import PlayDeveloperAPI

/// What the paging of a window passes around: what its calls end with (the ``GoogleIntakeRunner``'s child
/// tasks), and per slice what the ``GoogleVoidedSync/PagerStateMachine`` has learnt.
extension GoogleVoidedSync {
    /// One slice's voided page, answered (or failed) in its call's own task.
    struct Answer: Sendable {
        var slice: Int
        var result: Result<VoidedPurchasesListResponse, any Error>
        var seconds: Double
        /// The page's rows as the ledger takes them (``RefundRecord/intake(_:receivedAt:)``), mapped in the call's own
        /// task while the page before is being stored.
        var intake: (records: [RefundRecord], quarantined: [QuarantinedRow], merged: Int) = ([], [], 0)
        /// The intake's records made ready to write (``RefundLedger/prepare(_:runId:)``), in the call's own task too.
        var prepared: RefundLedger.Prepared?
    }

    /// What a child task of the paging ends with: a voided page, or an Orders answer for the amounts of pages already
    /// stored.
    enum CallEnded: Sendable {
        case page(Answer)
        case orders(GoogleOrderAmounts.OrdersAnswer)
        /// A voided page whose orders were asked before it is stored.
        case ahead(AheadAnswer)
    }

    /// What the paging knows of one slice besides its saved row.
    struct SliceState {
        /// The slice as paged: its token is the next call's.
        var slice: VoidedSlice
        /// The slice as of its last page handed to the store: what its row and the checkpoint may say.
        var stored: VoidedSlice
        /// Its pages answered and not yet stored, oldest first: a page waiting for its orders holds back the store
        /// (never the call) of the pages after it.
        var held: [PagerStateMachine.HeldPage] = []
        /// Its page handed to the store is not yet stored: the next one waits (its row follows that page's).
        var storing = false
        /// Its token chain: checked for a store paging in a circle, and started over once when a token is refused
        /// (the rules every chain of pages shares, see PageChain and TokenChainPager).
        var chain: PageChain
        /// Its last page was all new rows: the next one likely is too (the ledger skips a lookup).
        var expectNew = false
        /// How far into its span it has been read, 0...1, for the progress line.
        var reached: Double
        /// The latest void time seen in it.
        var lastSeen: Int64?
        /// Rows per millisecond of its span so far (a slice split off takes its parent's until its own first page).
        var density: Double?

        init(_ slice: VoidedSlice, app: String, expectNew: Bool = false, density: Double? = nil) {
            self.slice = slice
            self.chain = PageChain(
                app: app, api: .googleVoidedPurchases, name: "slice \(slice.number)", startingAt: slice.token,
                maximumPages: GoogleVoidedSync.maximumChainPages)
            self.stored = slice
            self.expectNew = expectNew
            self.reached = slice.drained ? 1 : 0
            self.density = density
        }

        /// The pages it seems to have left (see ``GoogleVoidedSync/pagesLeft(_:lastSeen:density:)``).
        var pagesLeft: Double { GoogleVoidedSync.pagesLeft(slice, lastSeen: lastSeen, density: density) }

        /// Takes in the rows of a stored page: the latest void time, and the density it gives.
        mutating func track(_ rows: [RefundRecord]) {
            if let last = rows.map({ GoogleVoidedSync.millis($0.refundedAt) }).max() {
                lastSeen = max(last, lastSeen ?? last)
            }
            let start = GoogleVoidedSync.millis(slice.start)
            if let lastSeen, lastSeen > start { density = Double(slice.rowsDone) / Double(lastSeen - start) }
        }

        /// Moves the progress mark to the page's last row (or to the end when drained).
        mutating func reach(_ last: RefundRecord?) {
            reached =
                slice.drained ? 1 : GoogleVoidedSync.position(last, start: slice.start, end: slice.end) ?? reached
        }
    }
}

/// What the ``GoogleVoidedSync/PagerStateMachine`` takes and returns.
extension GoogleVoidedSync.PagerStateMachine {
    /// One voided call: the slice at index `slice`, from its bounds or from the page `token` names.
    struct Call: Sendable, Equatable {
        var slice: Int
        var start: Date
        var end: Date
        var token: String?
    }

    /// A page to store in one transaction with the slice row and checkpoint that follow it.
    struct PageWrite: Equatable {
        var slice: Int
        var records: [RefundRecord]
        var quarantined: [QuarantinedRow]
        /// The slice's last page was all new rows: the ledger may skip its lookup.
        var expectNew: Bool
        var checkpoint: SyncCheckpoint
        /// The slice's row; nil when the page closes the window (its slices are then forgotten).
        var sliceRow: VoidedSlice?
        /// The page's number in the order pages were answered (``PagerStateMachine/lastPage`` then).
        var page: Int
    }

    /// A page answered and not yet stored: its slice row as of the page, and its rows once it may be stored (nil
    /// while its orders are asked).
    struct HeldPage {
        var page: Int
        var sliceRow: VoidedSlice
        var records: [RefundRecord]?
        var quarantined: [QuarantinedRow]
    }

    enum Action: Equatable {
        /// Make the call (the page's intake is mapped in the call's own task).
        case launch(Call)
        case store(PageWrite)
        /// A dry run counts what would be new instead of storing.
        case countNew([RefundRecord])
        /// Queue the orders of stored rows for the Orders calls.
        case price(orderIds: [String])
        /// Save the slice read again from its start; `gap` is the part older than Google keeps.
        case restart(VoidedSlice, gap: DateInterval?)
        /// Save the slice cut short and a part cut off it in one transaction (`pagesLeft` of the cut slice and of all,
        /// for the log).
        case split(kept: VoidedSlice, added: VoidedSlice, pagesLeft: Double, allPagesLeft: Double)
        /// Forget the window's slices and save this checkpoint.
        case closeWindow(SyncCheckpoint)
        /// End the voided calls still waiting or travelling (the first error).
        case cancelCalls
        case progress(fraction: Double?)
    }

    /// How the paging ended, once no call travels.
    enum Outcome {
        case failed(any Error)
        /// A stop request left slices undrained.
        case unfinished
        case drained(slices: Int, typicalMillis: Int?)
    }
}
