import RateLimiting

/// Follows one chain of pages (a Google voided slice, a Notification History window, a customer's Refund History)
/// and refuses to follow a store that pages in a circle: a next-page token (or Apple `revision`) already seen in the
/// chain, the token the page was asked with included; more than ``maximumEmptyPages`` pages in a row without a row
/// while the store says more follow; or more pages than ``maximumPages``.
///
/// A token the store refuses (expired, unknown) starts the chain over from its start, once (see ``restart(refusing:)``).
///
/// The error names the app, the API, the chain and the token; what the chain stored before stays stored.
struct PageChain {
    /// Pages in a row that hold no row while more follow, tolerated before the chain is given up.
    static let maximumEmptyPages = 5
    /// The most pages an Apple chain may take: 10,000 pages of 20 (200,000 notifications of one type in a window, or
    /// refunds of one customer) is more than any app's window holds.
    static let maximumApplePages = 10_000

    let app: String
    let api: StoreAPI
    /// What the chain is, for the error: `slice 3`, `customer 2000000123`, `REFUND notifications`.
    let name: String
    /// The most pages the chain may take.
    let maximumPages: Int
    private(set) var pages = 0
    private var seen: Set<String> = []
    private var emptyInARow = 0
    /// The chain was started over once already: a second refusal is an error.
    private(set) var restarted = false

    /// A chain whose first page is asked with `token` (nil: from its start).
    init(app: String, api: StoreAPI, name: String, startingAt token: String?, maximumPages: Int) {
        self.app = app
        self.api = api
        self.name = name
        self.maximumPages = max(1, maximumPages)
        if let token { seen.insert(token) }
    }

    /// Takes one answered page: `next` is the token it names for the following page (nil when it is the last; empty
    /// when the store says more follow but names none) and `rows` the rows it held.
    /// - Returns: `next`, when it may be followed.
    /// - Throws: `ReconcilerError` (`.storeLoop`) when it may not.
    mutating func follow(_ next: String?, rows: Int) throws -> String? {
        pages += 1
        guard let next else { return nil }
        if next.isEmpty {
            throw failure("the store said more pages follow but named no next page after \(pages) pages")
        }
        emptyInARow = rows == 0 ? emptyInARow + 1 : 0
        if seen.contains(next) {
            throw failure("the store sent page token \(Self.quoted(next)) again after \(pages) pages")
        }
        if emptyInARow > Self.maximumEmptyPages {
            throw failure("\(emptyInARow) pages in a row held no row while more were said to follow")
        }
        if pages >= maximumPages {
            throw failure(
                "more than \(maximumPages) pages (more than the window can hold), next token \(Self.quoted(next))")
        }
        seen.insert(next)
        return next
    }

    /// The call asked with `asked` was refused for its token (expired, unknown): the chain starts over from its
    /// start, forgetting the tokens it saw, once. Reading again is safe (every store is an upsert by natural key),
    /// at the cost of the pages read before.
    /// - Returns: whether it starts over; false for a second refusal, or for a call that named no token.
    mutating func restart(refusing asked: String?) -> Bool {
        guard asked != nil, !restarted else { return false }
        restarted = true
        pages = 0
        seen = []
        emptyInARow = 0
        return true
    }

    private func failure(_ what: String) -> ReconcilerError {
        ReconcilerError(
            .storeLoop, "app \(app), \(api), \(name): \(what); the chain is not followed further (a store fault)")
    }

    /// A token as shown in an error: quoted, at most 64 characters.
    static func quoted(_ token: String) -> String {
        "\"" + (token.count > 64 ? String(token.prefix(61)) + "..." : token) + "\""
    }
}
