/// The statements one connection has prepared, keyed by their SQL text: which text to run by name, which to prepare
/// now, and which names the server still holds that the cache has let go (to `DEALLOCATE` when the session is idle).
///
/// A text is prepared on its second use on the connection, not its first: the prepare itself costs no round trip
/// (it is pipelined with the statement's first execution by name), but a text run only once would take a slot and,
/// with dynamic SQL, push out the hot statements and cost a `DEALLOCATE` each. Its first use runs as an unnamed
/// statement, exactly as before the cache. The cache holds at most `capacity` texts and lets the least recently used
/// one go when full.
struct PreparedStatementCache {
    /// How to run a statement.
    enum Step: Equatable {
        /// Parse, plan and run it unnamed (`PQexecParams`): its first use, or a text that is never prepared.
        case unnamed
        /// Prepare it under this name and run it by that name, in one round trip.
        case prepare(String)
        /// Run the statement prepared under this name (`PQexecPrepared`).
        case execute(String)
    }

    private struct Entry {
        let name: String
        var lastUse: UInt64
    }

    /// The most texts kept prepared at once.
    let capacity: Int
    /// The most texts remembered as seen once; the memory is cleared when it is full.
    let seenCapacity: Int
    /// Whether anything is prepared at all (off for a pooler that cannot keep a session's prepared statements).
    let enabled: Bool
    private var entries: [String: Entry] = [:]
    private var seen: Set<Int> = []
    private var uses: UInt64 = 0
    private var lastNumber = 0
    /// Names the server still holds that no text maps to any more.
    private(set) var unneeded: [String] = []

    init(capacity: Int = 256, seenCapacity: Int = 4096, enabled: Bool = true) {
        self.capacity = max(capacity, 1)
        self.seenCapacity = max(seenCapacity, 1)
        self.enabled = enabled
    }

    /// How many texts are prepared.
    var count: Int { entries.count }

    /// The name `sql` is prepared under, if it is.
    func name(of sql: String) -> String? { entries[sql]?.name }

    /// How to run `sql` now; counts a use.
    mutating func step(for sql: String) -> Step {
        uses += 1
        if let index = entries.index(forKey: sql) {
            entries.values[index].lastUse = uses
            return .execute(entries.values[index].name)
        }
        guard enabled, Self.isPreparable(sql) else { return .unnamed }
        // A hash collision only prepares a text one use early.
        if seen.count >= seenCapacity { seen.removeAll(keepingCapacity: true) }
        if seen.insert(sql.hashValue).inserted { return .unnamed }
        lastNumber += 1
        return .prepare("storerecon_\(lastNumber)")
    }

    /// Records that the server prepared `sql` under `name`; lets the least recently used text go when full.
    mutating func prepared(_ sql: String, name: String) {
        if let old = entries.updateValue(Entry(name: name, lastUse: uses), forKey: sql) {
            unneeded.append(old.name)
        }
        guard entries.count > capacity,
            let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })
        else { return }
        entries[oldest.key] = nil
        unneeded.append(oldest.value.name)
    }

    /// Stops running `sql` by its name (the server's copy cannot be used any more); the name is to be deallocated.
    mutating func forget(_ sql: String) {
        guard let entry = entries.removeValue(forKey: sql) else { return }
        unneeded.append(entry.name)
    }

    /// Forgets every name: the session's prepared statements are gone (a new session, `DISCARD ALL`).
    mutating func removeAll() {
        entries.removeAll()
        unneeded.removeAll()
    }

    /// Hands over the names to deallocate, forgetting them.
    mutating func takeUnneeded() -> [String] {
        defer { unneeded.removeAll() }
        return unneeded
    }

    /// Whether a text may be prepared: not the commands that manage prepared statements or the session, and not COPY
    /// (its data does not come through `PQexecPrepared`).
    static func isPreparable(_ sql: String) -> Bool {
        let word = firstWord(sql)
        return !["DISCARD", "DEALLOCATE", "PREPARE", "EXECUTE", "COPY"].contains(word)
    }

    /// Whether running `sql` drops every prepared statement of the session (`DISCARD ALL`, `DEALLOCATE ALL`).
    static func dropsPreparedStatements(_ sql: String) -> Bool {
        let word = firstWord(sql)
        guard word == "DISCARD" || word == "DEALLOCATE" else { return false }
        let words = sql.uppercased().split { $0.isWhitespace || $0 == ";" }
        return words.dropFirst().first == "ALL"
            || (words.dropFirst().first == "PREPARE" && words.dropFirst(2).first == "ALL")
    }

    /// Whether a script of several statements may drop the session's prepared statements.
    static func scriptMayDropPreparedStatements(_ sql: String) -> Bool {
        let words = sql.uppercased().split { !$0.isLetter }
        // `DISCARD TEMP` (``PostgresConnection/resetSession()``) and `DISCARD PLANS` keep the statements.
        return words.contains("DEALLOCATE") || zip(words, words.dropFirst()).contains { $0 == "DISCARD" && $1 == "ALL" }
    }

    /// The first word of `sql`, upper-cased, after white space and `--` comments.
    private static func firstWord(_ sql: String) -> String {
        var rest = Substring(sql)
        while true {
            rest = rest.drop { $0.isWhitespace }
            guard rest.hasPrefix("--") else { break }
            rest = rest.drop { $0 != "\n" }
        }
        return rest.prefix { $0.isLetter }.uppercased()
    }
}
