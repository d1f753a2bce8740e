import RateLimiting
import Testing

@testable import Reconciler

/// The rule that ends a chain of pages a store pages in a circle (issue 27).
@Suite("PageChain")
struct PageChainTests {
    func chain(from token: String? = nil, maximumPages: Int = 100) -> PageChain {
        PageChain(
            app: "acme", api: .appleRefundHistory, name: "customer 7", startingAt: token, maximumPages: maximumPages)
    }

    @Test func newTokensAreFollowedAndTheLastPageEndsTheChain() throws {
        var pages = chain()
        #expect(try pages.follow("a", rows: 20) == "a")
        #expect(try pages.follow("b", rows: 20) == "b")
        #expect(try pages.follow(nil, rows: 3) == nil)
        #expect(pages.pages == 3)
    }

    @Test func aTokenSeenBeforeInTheChainEndsItNamingAppAPIAndToken() throws {
        var pages = chain()
        _ = try pages.follow("a", rows: 20)
        _ = try pages.follow("b", rows: 20)
        let error = #expect(throws: ReconcilerError.self) { try pages.follow("a", rows: 20) }
        #expect(error?.code == .storeLoop)
        #expect(
            error?.message
                == "app acme, apple.refundhistory, customer 7: the store sent page token \"a\" again after 3 pages; "
                + "the chain is not followed further (a store fault)")
        #expect(error?.exitCode == 1)
    }

    @Test func anAppleRevisionThatDoesNotMoveWhileHasMoreEndsTheChain() throws {
        // Asked with the stored revision r7; the answer names r7 again with hasMore true.
        var pages = chain(from: "r7")
        #expect(throws: ReconcilerError.self) { try pages.follow("r7", rows: 20) }
    }

    /// Apple's `hasMore: true` without a `paginationToken` (or `revision`): the sites pass an empty token, and the
    /// window is not taken as read to its end.
    @Test func morePagesSaidToFollowWithoutATokenEndTheChainAsAStoreFault() throws {
        var pages = chain()
        _ = try pages.follow("a", rows: 20)
        let error = #expect(throws: ReconcilerError.self) { try pages.follow("", rows: 20) }
        #expect(error?.code == .storeLoop)
        #expect(error?.message.contains("said more pages follow but named no next page after 2 pages") == true)
    }

    @Test func emptyPagesWithATokenAreToleratedFiveTimesInARow() throws {
        var pages = chain()
        for index in 1...5 { _ = try pages.follow("e\(index)", rows: 0) }
        _ = try pages.follow("full", rows: 1)
        for index in 6...10 { _ = try pages.follow("e\(index)", rows: 0) }
        let error = #expect(throws: ReconcilerError.self) { try pages.follow("e11", rows: 0) }
        #expect(error?.message.contains("6 pages in a row held no row") == true)
    }

    @Test func aChainLongerThanItsMaximumEnds() throws {
        var pages = chain(maximumPages: 3)
        _ = try pages.follow("a", rows: 1)
        _ = try pages.follow("b", rows: 1)
        let error = #expect(throws: ReconcilerError.self) { try pages.follow("c", rows: 1) }
        #expect(error?.message.contains("more than 3 pages") == true)
        // The last page of a long chain is still taken.
        var last = chain(maximumPages: 3)
        _ = try last.follow("a", rows: 1)
        _ = try last.follow("b", rows: 1)
        #expect(try last.follow(nil, rows: 1) == nil)
    }

    @Test func aRefusedTokenStartsTheChainOverOnceForgettingWhatItSaw() throws {
        var pages = chain(from: "saved")
        #expect(try pages.follow("a", rows: 20) == "a")
        let restarted = pages.restart(refusing: "a")
        #expect(restarted)
        #expect(pages.restarted)
        #expect(pages.pages == 0)
        // The chain read again from its start may name "a" and "saved" again.
        #expect(try pages.follow("saved", rows: 20) == "saved")
        #expect(try pages.follow("a", rows: 20) == "a")
        let again = pages.restart(refusing: "a")
        #expect(!again, "a second refusal is an error")
        var fromStart = chain()
        let untokened = fromStart.restart(refusing: nil)
        #expect(!untokened, "a call from the start named no token to refuse")
    }

    @Test func longTokensAreShortenedInTheError() {
        let long = String(repeating: "x", count: 300)
        #expect(PageChain.quoted(long) == "\"" + String(repeating: "x", count: 61) + "...\"")
    }
}
