import Foundation
import Ledger
import RateLimiting

/// Paging a window as several time slices at once.
///
/// Pages of one token chain can only be asked for one after the other, so a single chain makes at most one call per
/// answer time: about 0.65 calls/s at 1.5 s answers, where 30 per 30 s allows 1/s and a burst of 30. The window is
/// therefore cut into slices by recorded time, each paged by its own chain, all calls passing the shared quota gate:
/// with enough slices in flight the gate, not the answer time, sets the pace.
///
/// Exactness: each page, its slice's next token and the window's checkpoint commit in one transaction (pages are
/// stored one at a time on the job's connection, whichever slice they come from). The high-water mark moves only
/// over slices fully drained from the window's start on; a crash resumes every unfinished slice from its last stored
/// page, costing at most the call each slice had in flight. A quota answer, an outage or a failed store in one slice
/// stops the others: no new call starts, pages already answered are stored, and the error surfaces (exit 75 for
/// quota and outages), with every stored page kept.
extension GoogleVoidedSync {
    /// What paging a window needs besides its slices.
    struct Window {
        var job: String
        var purpose: CallPurpose
        var start: Date
        var end: Date
        var started: ContinuousClock.Instant
        /// The incremental checkpoint the window was planned from: what comes before it was read by earlier runs,
        /// so a part of the window Google no longer keeps is a gap only after it.
        var readBefore: Date?
    }

    /// The most pages one slice's chain may take: a day's quota of voided calls (6000). No window holds more pages
    /// than a day lets a chain read; a store still naming new tokens past that pages in a circle.
    static let maximumChainPages = 6000

    /// How many slices a new window is cut into: enough that a burst of the quota window goes out within about 3 s
    /// at the measured call time (or, with the limits lifted, that calls keep pace with storing a page, about 50 ms),
    /// at most `cap`; one when the call time is unknown or short.
    static func sliceCount(callSeconds: Double?, burst: Int?, cap: Int) -> Int {
        guard let callSeconds, callSeconds > 0, cap > 1 else { return 1 }
        let pace = max(0.05, 3.0 / Double(max(1, burst ?? .max)))
        return min(cap, max(1, Int((callSeconds / pace).rounded(.up))))
    }

    /// A drained window's checkpoint: the high-water mark at its end, no window in flight.
    static func close(_ checkpoint: inout SyncCheckpoint, end: Date) {
        checkpoint.highWater = max(end, checkpoint.highWater ?? end)
        checkpoint.windowStart = nil
        checkpoint.windowEnd = nil
        checkpoint.pageToken = nil
        checkpoint.pagesDone = 0
        checkpoint.rowsDone = 0
    }

    /// Cuts what is left of `slice` after its latest void time stored (`lastSeen`) into `parts` of equal span, when
    /// more than a page of it seems left (judged from the rows stored so far and how far into its span the latest
    /// one is): the slice keeps
    /// the first part (its token reads on from its last row), and the others, numbered from `number`, are new
    /// slices, in time order. Each part costs at most one call: its last page, or the old chain's page that reads
    /// past its new end.
    static func cut(_ slice: VoidedSlice, lastSeen: Int64?, into parts: Int, number: Int) -> (
        kept: VoidedSlice, added: [VoidedSlice]
    )? {
        guard parts > 1, !slice.drained, slice.token != nil, let last = lastSeen else { return nil }
        let (start, end) = (millis(slice.start), millis(slice.end))
        guard last > start, end - last > 2 * Int64(parts) else { return nil }
        let rowsPerMillisecond = Double(slice.rowsDone) / Double(last - start)
        guard rowsPerMillisecond * Double(end - last) > Double(pageSize) else { return nil }
        // Part i (from 0) ends at bounds[i]; the last ends where the slice did.
        let bounds = (1...parts).map { last + (end - last) * Int64($0) / Int64(parts) }
        var kept = slice
        kept.end = VoidedSlice.date(millis: bounds[0])
        let added = (1..<parts).map { part in
            VoidedSlice(
                number: number + part - 1, start: VoidedSlice.date(millis: bounds[part - 1] + 1),
                end: part == parts - 1 ? slice.end : VoidedSlice.date(millis: bounds[part]))
        }
        return (kept, added)
    }

    /// The pages a slice seems to have left (those in flight included): the rows its density so far puts between
    /// its latest void time seen and its end, in pages; a slice not yet answered, its density applied to its whole
    /// span; one page when nothing is known; none when drained.
    static func pagesLeft(_ slice: VoidedSlice, lastSeen: Int64?, density: Double?) -> Double {
        guard !slice.drained else { return 0 }
        guard let density else { return 1 }
        let from = max(lastSeen ?? millis(slice.start), millis(slice.start))
        return max(1, density * Double(max(0, millis(slice.end) - from)) / Double(pageSize))
    }

    /// How many parts the slice whose page was just stored (`own` pages left, of the `live` slices' estimates,
    /// itself included) is cut into now: 1 keeps it whole. Its chain pages one page per answer time; the quota
    /// window lets `burst` calls go at once. Three reasons:
    /// - fewer chains travel than the window started with (`traveling` < `startCount`; at most `startCount` splits
    ///   for this reason), and it has two pages or more left: the others drained, this one would page alone; halved;
    /// - the last quota window would find it with more pages than one call: while the gate sets the pace the chains
    ///   advance alike, a page each per answer time, each until it is drained; so the calls before the last window
    ///   (the projected calls, `stored` plus each live slice's pages, fill whole windows) take every chain up to the
    ///   same level (``pagesBefore(_:filling:)``), and what this chain has beyond that level is paged in the last
    ///   window one page per answer time. (A share in proportion to `own` misses the long chain that is the tail:
    ///   the short ones drain first.) While a round of calls or half a window or more is left before the last
    ///   window, a chain with two pages or more and 1.5 beyond the level is halved, up to `2 × startCount` splits;
    /// - less than that (see ``endParts(_:live:stored:burst:budget:)``): the calls before the last window are
    ///   those already travelling, so the level says nothing of a chain; one with more than a page left is cut
    ///   into parts of less than a page, up to `3 × startCount` splits. Such a cut costs no call: 1.4 pages are
    ///   two calls whole or in two parts, and a part read by the chain's call in flight is drained with it.
    /// A split is made only while the last window keeps two calls to spare (a call more never opens another window)
    /// and when the work takes more than one window.
    static func splitParts(
        _ own: Double, live: [Double], traveling: Int, startCount: Int, splits: Int, stored: Int, burst: Int?
    ) -> Int {
        guard own > 1 else { return 1 }
        if own >= 2, traveling < startCount, splits < startCount { return 2 }
        // A window of work or less is paged at the answer time, not the gate's pace: only the first reason holds.
        guard let burst, burst > 2, let end = lastWindow(live, stored: stored, burst: burst) else { return 1 }
        guard isNearEnd(end.before, live: live, burst: burst) else {
            let beyond = own - pagesBefore(live, filling: end.before)
            return own >= 2 && beyond >= 1.5 && splits < 2 * startCount ? 2 : 1
        }
        return endParts(own, live: live, stored: stored, burst: burst, budget: 3 * startCount - splits)
    }

    /// Whether `before` calls before the last quota window are less than a round of the `live` chains' calls and
    /// less than half a window: what is left of the chains then is what the last window finds.
    static func isNearEnd(_ before: Double, live: [Double], burst: Int) -> Bool {
        before < Double(min(live.count, burst / 2))
    }

    /// The parts a chain of `own` pages is cut into near the end: each 15 % short of a page (room for the
    /// estimate's error) while the last window keeps two calls to spare and no other window opens, else each a page
    /// or less (as many calls as the chain makes whole); at most `budget + 1`.
    static func endParts(_ own: Double, live: [Double], stored: Int, burst: Int, budget: Int) -> Int {
        guard own > 1, budget > 0, let at = live.firstIndex(of: own),
            let now = lastWindow(live, stored: stored, burst: burst)
        else { return 1 }
        var others = live
        others.remove(at: at)
        let whole = Int(own.rounded(.up))
        var parts = Int((own / 0.85).rounded(.up))
        while parts > whole {
            let cut = others + Array(repeating: own / Double(parts), count: parts)
            if let after = lastWindow(cut, stored: stored, burst: burst), after.windows == now.windows { break }
            parts -= 1
        }
        return min(parts, budget + 1)
    }

    /// The calls projected (`stored` plus each live chain's pages, a part page counted whole): how many quota
    /// windows they open, and how many calls are left before the last window (the windows before it are full).
    /// Nil when they fit in one window, or the last window has fewer than two calls to spare.
    static func lastWindow(_ live: [Double], stored: Int, burst: Int) -> (windows: Int, before: Double)? {
        let projected = stored + live.reduce(0) { $0 + Int($1.rounded(.up)) }
        let last = (projected - 1) % burst + 1
        guard live.reduce(0, +) > 0, projected > burst, last <= burst - 2 else { return nil }
        let windows = (projected - 1) / burst + 1
        return (windows, Double(max(0, (windows - 1) * burst - stored)))
    }

    /// The level that `calls` calls bring chains of `pages` pages to when each round gives every chain not yet
    /// drained one page: the pages each chain has paged by then, at most its own.
    static func pagesBefore(_ pages: [Double], filling calls: Double) -> Double {
        var (level, budget) = (0.0, calls)
        var rest = pages.sorted()[...]
        while let next = rest.first {
            let step = (next - level) * Double(rest.count)
            guard step < budget else { return level + budget / Double(rest.count) }
            (level, budget) = (next, budget - step)
            rest = rest.dropFirst()
        }
        return level
    }

    /// A time in whole milliseconds, as the slices' bounds are.
    static func millis(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The end of the slices drained from the window's start on, or nil when the first is not drained.
    static func drainedPrefixEnd(_ slices: [VoidedSlice]) -> Date? {
        var end: Date?
        // In time order: a slice split off a running one is numbered (and kept) after the others.
        for slice in slices.sorted(by: { $0.start < $1.start }) {
            guard slice.drained else { break }
            end = slice.end
        }
        return end
    }

    /// The call time most calls beat by a quarter (calls that waited for the quota gate are longer), milliseconds.
    static func typicalMillis(_ seconds: [Double]) -> Int? {
        guard !seconds.isEmpty else { return nil }
        let sorted = seconds.sorted()
        return Int((sorted[sorted.count / 4] * 1000).rounded())
    }

    /// How far into the window the slices are, weighted by their spans.
    static func fraction(_ slices: [VoidedSlice], reached: [Double]) -> Double? {
        let spans = slices.map { max(0, $0.end.timeIntervalSince($0.start)) }
        let total = spans.reduce(0, +)
        guard total > 0 else { return nil }
        return zip(spans, reached).reduce(0) { $0 + $1.0 * $1.1 } / total
    }
}
