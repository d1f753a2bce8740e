import Foundation
import Ledger
import PlayDeveloperAPI

/// What the paging of a window passes around: the events its calls end with (the ``GoogleVoidedSync/Pager``'s child
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
    enum Event: Sendable {
        case page(Answer)
        case orders(GoogleOrderAmounts.OrdersAnswer)
        /// A voided page whose orders were asked before it is stored.
        case ahead(AheadAnswer)
    }

    /// What the paging knows of one slice besides its saved row.
    struct SliceState {
        var slice: VoidedSlice
        /// Its token chain, checked for a store paging in a circle (see PageChain).
        var chain: PageChain?
        /// Its refused page token was restarted once already (a second refusal is an error).
        var restarted = false
        /// Its last page was all new rows: the next one likely is too (the ledger skips a lookup).
        var expectNew = false
        /// How far into its span it has been read, 0...1, for the progress line.
        var reached: Double
        /// The latest void time seen in it.
        var lastSeen: Int64?
        /// Rows per millisecond of its span so far (a slice split off takes its parent's until its own first page).
        var density: Double?

        init(_ slice: VoidedSlice, expectNew: Bool = false, density: Double? = nil) {
            self.slice = slice
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
