import Ledger
import Synchronization

/// Counts what a job did (rows, pages, calls per API) for `job_run`, logs and metrics. Safe to share between tasks.
public final class JobCounters: Sendable {
    private let values = Mutex<[String: Int]>([:])
    private let calls = Mutex<[String: Int]>([:])
    private let seen = Mutex<[String]>([])

    /// Empty counters.
    public init() {}

    /// Adds to a named count.
    public func add(_ name: String, _ amount: Int = 1) {
        values.withLock { $0[name, default: 0] += amount }
    }

    /// Adds a store call of an API.
    public func call(_ api: String, _ amount: Int = 1) {
        calls.withLock { $0[api, default: 0] += amount }
    }

    /// A named count.
    public subscript(name: String) -> Int { values.withLock { $0[name] ?? 0 } }

    /// All counts.
    public var snapshot: [String: Int] { values.withLock { $0 } }

    /// Calls per API.
    public var callSnapshot: [String: Int] { calls.withLock { $0 } }

    /// Customers a dry run has already looked at (a dry run reserves nothing in the database).
    public var seenCustomers: [String] { seen.withLock { $0 } }

    /// Remembers a customer a dry run looked at.
    public func markSeen(_ id: String) { seen.withLock { $0.append(id) } }
}
extension JobCounters: LedgerCounters {}
