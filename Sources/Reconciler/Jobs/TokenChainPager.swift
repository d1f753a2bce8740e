/// The decisions of paging one chain of pages (a Notification History window of one type, a customer's Refund
/// History), apart from their I/O so they can be tested alone: which token the next call names, when it leaves, what
/// a page answered does to the chain, a refused token started over once, a store paging in a circle (see
/// ``PageChain``), a stop request, and whether a stored page may move the checkpoint. Each method takes one event and
/// returns what must be done, in order; the runner performs the actions and reports what they came to as events.
///
/// `Page` is what the runner hands back with a page: the store's answer, then (after ``Action/prepare(_:)``) the page
/// made ready to store. Pages are prepared and stored one at a time, oldest first.
struct TokenChainPager<Page> {
    /// What a page with a payload set aside (it failed verification, it is quarantined) does to the chain.
    enum SetAsideRule: Sendable {
        /// Later pages are still read and stored, but the checkpoint stays before that page: the next run reads it
        /// again, so a payload spoiled on its way is not skipped for good.
        case holdCheckpoint
        /// The page is stored without moving the checkpoint, and the chain ends there.
        case endChain
    }

    /// One event: what a call or an action came to.
    enum Event {
        /// The call answered a page naming `next` (nil: the last page) and holding `rows` rows.
        case answered(Page, next: String?, rows: Int)
        /// The call failed; `tokenRefused` says the store refused the token it named (expired, unknown).
        case failed(any Error, tokenRefused: Bool)
        /// The oldest page held was prepared; `setAside` says a payload of it was set aside.
        case prepared(Page, setAside: Bool)
        /// The page of the last ``Action/store(_:_:)`` was stored.
        case stored
        /// A stop was requested (a signal).
        case stopRequested
    }

    /// Where a stored page leaves the chain.
    struct Store: Equatable {
        /// The token the page was asked with (nil: the chain's start).
        var asked: String?
        /// The token of the page after it; nil when it was the last.
        var next: String?
        /// Whether its checkpoint may be saved with it (false once a page was set aside).
        var movesCheckpoint: Bool
    }

    /// How the chain ended.
    enum Outcome: Equatable {
        /// Its last page is stored.
        case drained
        /// It ended at a page set aside (``SetAsideRule/endChain``).
        case endedBySetAside
        /// A stop request left it unfinished; every page answered is stored.
        case stopped
    }

    /// What the runner must do.
    enum Action {
        /// Make the call naming `token` (nil: from the chain's start).
        case call(token: String?)
        /// The token was refused: the chain starts over from its start (the log line and counter).
        case restart
        /// Make the oldest page held ready to store (verify it), then report ``Event/prepared(_:setAside:)``.
        case prepare(Page)
        /// Store the page with where it leaves the chain, then report ``Event/stored``.
        case store(Page, Store)
        /// The chain has ended; nothing else follows.
        case finish(Outcome)
        /// The chain has failed (the first error); the pages answered before it are stored.
        case fail(any Error)
    }

    /// The next call may leave while the page before it is prepared and stored (at most that one page held).
    let overlap: Bool
    let setAsideRule: SetAsideRule
    private var chain: PageChain
    /// The next call's token.
    private(set) var token: String?
    /// The token of the call travelling.
    private var asked: String?
    /// A call travels.
    private(set) var calling = false
    /// Pages answered and not yet stored, oldest first; the first is being prepared or stored.
    private var held: [(page: Page, asked: String?, next: String?)] = []
    /// A further call is owed: false once the last page is answered or the chain ended at a page set aside.
    private var more = true
    private var setAside = false
    private var stopping = false
    private var failure: (any Error)?
    private var ended = false

    /// A pager whose first call names `chain`'s starting token, `token`.
    init(_ chain: PageChain, startingAt token: String?, overlap: Bool, setAside: SetAsideRule) {
        self.chain = chain
        self.token = token
        self.overlap = overlap
        self.setAsideRule = setAside
    }

    /// The first call leaves.
    mutating func start() -> [Action] {
        mayCall() + mayFinish()
    }

    /// Takes one event; after the end, none.
    mutating func handle(_ event: Event) -> [Action] {
        guard !ended else { return [] }
        switch event {
        case .answered(let page, let next, let rows):
            return answered(page, next: next, rows: rows)
        case .failed(let error, let tokenRefused):
            return failed(error, tokenRefused: tokenRefused)
        case .prepared(let page, let setAside):
            return prepared(page, setAside: setAside)
        case .stored:
            held.removeFirst()
            return mayCall() + (held.first.map { [.prepare($0.page)] } ?? []) + mayFinish()
        case .stopRequested:
            stopping = true
            return mayFinish()
        }
    }

    /// A page: the next call leaves first (travelling while this page is prepared and stored) when the chain goes
    /// on. A chain paging in a circle fails here, the page not stored.
    private mutating func answered(_ page: Page, next: String?, rows: Int) -> [Action] {
        calling = false
        guard failure == nil, !(setAside && setAsideRule == .endChain) else { return mayFinish() }
        do {
            token = try chain.follow(next, rows: rows)
        } catch {
            failure = error
            return mayFinish()
        }
        more = token != nil
        held.append((page, asked, token))
        return mayCall() + (held.count == 1 ? [.prepare(page)] : [])
    }

    /// A refused token starts the chain over once (see ``PageChain/restart(refusing:)``); any other error, or a
    /// second refusal, fails the chain once the pages before it are stored.
    private mutating func failed(_ error: any Error, tokenRefused: Bool) -> [Action] {
        calling = false
        guard failure == nil, tokenRefused, chain.restart(refusing: asked) else {
            if failure == nil { failure = error }
            return mayFinish()
        }
        token = nil
        more = true
        return [.restart] + mayCall() + mayFinish()
    }

    /// The oldest page held is ready: it is stored, moving the checkpoint unless it or a page before it was set
    /// aside (``SetAsideRule/endChain``: the chain ends with it).
    private mutating func prepared(_ page: Page, setAside: Bool) -> [Action] {
        let head = held[0]
        held[0].page = page
        self.setAside = self.setAside || setAside
        if setAside && setAsideRule == .endChain {
            more = false
            // Pages answered after it are dropped: the chain is read again from before it next time.
            held.removeSubrange(1...)
        }
        return [.store(page, Store(asked: head.asked, next: head.next, movesCheckpoint: !self.setAside))]
    }

    /// The next call, when one is owed and may leave: never after an error or a stop request, never two at once, and
    /// (with `overlap`) while at most the page before it is held.
    private mutating func mayCall() -> [Action] {
        guard !calling, more, failure == nil, !stopping, held.count <= (overlap ? 1 : 0) else { return [] }
        calling = true
        asked = token
        return [.call(token: token)]
    }

    /// The end, once no call travels and every page answered is stored.
    private mutating func mayFinish() -> [Action] {
        guard !ended, !calling, held.isEmpty else { return [] }
        if let failure {
            ended = true
            return [.fail(failure)]
        }
        if !more {
            ended = true
            return [.finish(setAside && setAsideRule == .endChain ? .endedBySetAside : .drained)]
        }
        guard stopping else { return [] }
        ended = true
        return [.finish(.stopped)]
    }
}
