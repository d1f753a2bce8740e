import Synchronization

#if os(Linux)
    import CMalloc
#endif

/// Hands the memory a long job freed back to the system.
///
/// glibc keeps freed memory in its arenas (one per thread that allocated, up to eight per core) and gives back only
/// the top of the main one by itself. A sync that parses a page of a thousand rows, and the Orders answers for it,
/// on whichever cooperative thread runs it, leaves free pages scattered over the arenas, and its resident size crept
/// up with the length of the run although what it held did not: `scripts/chaos-load`'s voided sync peaked at 67 MB
/// for 19,000 rows and 77 MB for 75,000, with 19.8 MB and 21.2 MB of live heap (heaptrack). Trimmed after each
/// stored page, 65.6 MB and 67.5 MB (`docs/performance.md`). A trim walks every arena under its lock, so it runs at
/// most once per ``interval``: a sync at Google's quota stores about a page a second and trims after each, an intake
/// without a quota stores dozens and trims after one a second. Once every ten seconds was too seldom: the full
/// chaos-load night peaked at 89 MB again, as without a trim.
enum FreedMemory {
    /// The least time between two trims.
    static let interval: Duration = .seconds(1)
    private static let lastTrim = Mutex<ContinuousClock.Instant?>(nil)

    /// Returns the free pages of every arena to the system (`malloc_trim(0)`), unless that was done less than
    /// ``interval`` ago; nothing off Linux.
    static func release() {
        #if os(Linux)
            let now = ContinuousClock.now
            let due = lastTrim.withLock { last in
                if let last, now - last < interval { return false }
                last = now
                return true
            }
            if due { _ = malloc_trim(0) }
        #endif
    }
}
