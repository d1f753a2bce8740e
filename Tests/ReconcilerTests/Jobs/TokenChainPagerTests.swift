import RateLimiting
import Testing

@testable import Reconciler

/// The paging decisions of one chain of pages, event by event, with no store, database or task: which call leaves,
/// what is prepared and stored with which tokens, when the chain restarts, fails, stops or ends. Pages are named by
/// hand ("p1", "p2", ...) and the expected actions written out as text.
@Suite("TokenChainPager")
struct TokenChainPagerTests {
    typealias Pager = TokenChainPager<String>

    struct Refused: Error, CustomStringConvertible {
        var description: String { "4000017 pagination token expired" }
    }

    struct Outage: Error, CustomStringConvertible {
        var description: String { "503 outage" }
    }

    /// A pager fed by hand; each step returns its actions as text: `call t1`, `call start`, `prepare p1`,
    /// `store p1 t0>t1`, `store p1 t0>end held`, `finish drained`, ...
    final class Feed {
        var pager: Pager

        init(from token: String? = nil, overlap: Bool = true, setAside: Pager.SetAsideRule = .holdCheckpoint) {
            let chain = PageChain(
                app: "acme", api: .appleNotificationHistory, name: "REFUND notifications", startingAt: token,
                maximumPages: 100)
            pager = Pager(chain, startingAt: token, overlap: overlap, setAside: setAside)
        }

        func start() -> [String] { Self.text(pager.start()) }

        func callFails(_ error: any Error, tokenRefused: Bool) -> [String] {
            Self.text(pager.handle(.failed(error, tokenRefused: tokenRefused)))
        }

        func answered(_ name: String, next: String?, rows: Int = 20) -> [String] {
            Self.text(pager.handle(.answered(name, next: next, rows: rows)))
        }

        func prepared(_ name: String, setAside: Bool = false) -> [String] {
            Self.text(pager.handle(.prepared(name, setAside: setAside)))
        }

        func stored() -> [String] { Self.text(pager.handle(.stored)) }

        func stopRequested() -> [String] { Self.text(pager.handle(.stopRequested)) }

        /// The page answered, prepared (its prepared form named with a prime) and stored, in one list.
        func page(_ name: String, next: String?, setAside: Bool = false) -> [String] {
            answered(name, next: next) + prepared(name + "'", setAside: setAside) + stored()
        }

        static func text(_ actions: [Pager.Action]) -> [String] {
            actions.map { action in
                switch action {
                case .call(let token): return "call \(token ?? "start")"
                case .restart: return "restart"
                case .prepare(let page): return "prepare \(page)"
                case .store(let page, let store):
                    return "store \(page) \(store.asked ?? "start")>\(store.next ?? "end")"
                        + (store.movesCheckpoint ? "" : " held")
                case .finish(let outcome): return "finish \(outcome)"
                case .fail(let error): return "fail \(error)"
                }
            }
        }
    }

    @Test func theNextCallLeavesWhileAPageIsStoredAndTheLastPageDrainsTheChain() {
        let feed = Feed()
        #expect(feed.start() == ["call start"])
        #expect(feed.page("p1", next: "t1") == ["call t1", "prepare p1", "store p1' start>t1"])
        #expect(feed.pager.calling)
        #expect(feed.page("p2", next: nil) == ["prepare p2", "store p2' t1>end", "finish drained"])
        #expect(!feed.pager.calling)
    }

    @Test func withoutOverlapTheNextCallWaitsForTheStore() {
        let feed = Feed(from: "r7", overlap: false)
        #expect(feed.start() == ["call r7"])
        #expect(feed.answered("p1", next: "r8", rows: 20) == ["prepare p1"])
        #expect(feed.prepared("p1", setAside: false) == ["store p1 r7>r8"])
        #expect(feed.stored() == ["call r8"])
    }

    @Test func aRefusedTokenRestartsTheChainOnceAndASecondRefusalFails() {
        let feed = Feed(from: "saved")
        _ = feed.start()
        #expect(
            feed.callFails(Refused(), tokenRefused: true) == ["restart", "call start"])
        #expect(feed.page("p1", next: "t1") == ["call t1", "prepare p1", "store p1' start>t1"])
        // The restarted chain forgot the tokens before it: "saved" may come again.
        #expect(feed.page("p2", next: "saved") == ["call saved", "prepare p2", "store p2' t1>saved"])
        #expect(
            feed.callFails(Refused(), tokenRefused: true)
                == ["fail 4000017 pagination token expired"])
        #expect(feed.stopRequested().isEmpty, "nothing follows the end")
    }

    @Test func aRefusalOfTheChainsFirstCallFromItsStartAndOtherErrorsFailAtOnce() {
        let fromStart = Feed()
        _ = fromStart.start()
        #expect(
            fromStart.callFails(Refused(), tokenRefused: true)
                == ["fail 4000017 pagination token expired"])
        let outage = Feed(from: "saved")
        _ = outage.start()
        #expect(outage.callFails(Outage(), tokenRefused: false) == ["fail 503 outage"])
    }

    @Test func aStorePagingInACircleFailsAndThatPageIsNotStored() {
        let feed = Feed()
        _ = feed.start()
        _ = feed.page("p1", next: "a")
        _ = feed.page("p2", next: "b")
        let actions = feed.answered("p3", next: "a", rows: 20)
        #expect(actions.count == 1)
        #expect(actions.first?.contains("app acme, apple.notificationhistory, REFUND notifications") == true)
        #expect(actions.first?.contains("the store sent page token \"a\" again after 3 pages") == true)
    }

    @Test func aStopLetsTheCallTravellingEndAndItsPageBeStoredThenNoCallLeaves() {
        let feed = Feed()
        _ = feed.start()
        #expect(feed.answered("p1", next: "t1", rows: 20) == ["call t1", "prepare p1"])
        #expect(feed.stopRequested().isEmpty, "p1 is held and t1 travels")
        #expect(feed.prepared("p1", setAside: false) == ["store p1 start>t1"])
        #expect(feed.stored().isEmpty, "t1 still travels")
        #expect(feed.page("p2", next: "t2") == ["prepare p2", "store p2' t1>t2", "finish stopped"])
        #expect(feed.pager.token == "t2")
    }

    @Test func aStopBeforeTheFirstCallEndsAtOnceAndARefusalAfterAStopCallsNothing() {
        let idle = Feed()
        #expect(idle.stopRequested() == ["finish stopped"])
        #expect(idle.start().isEmpty, "no call leaves after the stop")
        let refused = Feed(from: "saved")
        _ = refused.start()
        _ = refused.stopRequested()
        #expect(refused.callFails(Refused(), tokenRefused: true) == ["restart", "finish stopped"])
    }

    @Test func aPageSetAsideHoldsTheCheckpointForItAndEveryLaterPage() {
        let feed = Feed()
        _ = feed.start()
        #expect(feed.page("p1", next: "t1") == ["call t1", "prepare p1", "store p1' start>t1"])
        #expect(
            feed.page("p2", next: "t2", setAside: true) == [
                "call t2", "prepare p2", "store p2' t1>t2 held",
            ])
        #expect(feed.page("p3", next: nil) == ["prepare p3", "store p3' t2>end held", "finish drained"])
    }

    @Test func aPageSetAsideEndsAChainThatEndsThere() {
        let feed = Feed(from: "r1", overlap: false, setAside: .endChain)
        _ = feed.start()
        #expect(feed.page("p1", next: "r2") == ["prepare p1", "store p1' r1>r2", "call r2"])
        #expect(
            feed.page("p2", next: "r3", setAside: true)
                == ["prepare p2", "store p2' r2>r3 held", "finish endedBySetAside"])
    }

    @Test func aPageAnsweredWhileThePageBeforeIsStoredWaitsAndHoldsBackTheNextCall() {
        let feed = Feed()
        _ = feed.start()
        #expect(feed.answered("p1", next: "t1") == ["call t1", "prepare p1"])
        #expect(feed.answered("p2", next: "t2").isEmpty, "p1 is still held: at most one page held while a call travels")
        #expect(feed.prepared("p1") == ["store p1 start>t1"])
        #expect(feed.stored() == ["call t2", "prepare p2"])
        // A chain that ends at a page set aside drops the page answered after it (read again next time).
        let ending = Feed(setAside: .endChain)
        _ = ending.start()
        _ = ending.answered("p1", next: "t1")
        _ = ending.answered("p2", next: "t2")
        #expect(ending.prepared("p1", setAside: true) == ["store p1 start>t1 held"])
        #expect(ending.stored() == ["finish endedBySetAside"])
    }

    @Test func anEmptyChainDrainsWithItsOnlyPage() {
        let feed = Feed(overlap: false)
        _ = feed.start()
        #expect(feed.answered("p1", next: nil, rows: 0) == ["prepare p1"])
        #expect(feed.prepared("p1", setAside: false) == ["store p1 start>end"])
        #expect(feed.stored() == ["finish drained"])
    }
}
