import Synchronization

/// Why an app's night was cut short from outside its jobs (`nightly.appTimeout` passed): set once, read by the job
/// it interrupted, so that the job's record says so rather than naming the cancellation it met.
public final class AppDeadline: Sendable {
    private let reason = Mutex<String?>(nil)

    /// A deadline that has not passed.
    public init() {}

    /// The line a job stopped by the deadline records, or nil while it has not passed.
    public var passed: String? { reason.withLock { $0 } }

    /// Marks the deadline as passed, with the line to record.
    public func expire(_ line: String) {
        reason.withLock { if $0 == nil { $0 = line } }
    }
}
