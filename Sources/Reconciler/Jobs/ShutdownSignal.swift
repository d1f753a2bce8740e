import Foundation
import Logging
import Postgres
import Synchronization

/// SIGTERM / SIGINT handling for batch jobs: the first signal asks jobs to finish the page in hand, save, and stop
/// (exit 75); jobs poll ``isRequested`` between pages, and every wait at the quota gate ends at once
/// (``StoppableQuotaGate`` waits on ``stopped()``). A second signal exits at once (progress is still safe: every page
/// commits with its checkpoint).
public final class ShutdownSignal: Sendable {
    /// The waits and actions registered under keys that fall in one shard.
    private struct Shard {
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var actions: [Int: @Sendable () -> Void] = [:]
    }

    /// Every store call's quota wait registers an action here and takes it back (``whenRequested(_:)``), from every
    /// thread at once: one lock for them all was among the busiest of a 50-app run (spinning, then a
    /// priority-inheritance futex). A key's shard is its low bits; a stop sets the flag first, then drains each shard,
    /// and a registration reads the flag under its shard's lock, so none is missed.
    private static let shardCount = 16
    private let requested = Atomic(false)
    private let nextKey = Atomic(0)
    private let shards: [SleepingMutex<Shard>]
    // The dispatch sources must stay alive for the process; install() runs once, from the main command, before
    // any job starts, so this is never touched concurrently.
    nonisolated(unsafe) private static var retained: [any DispatchSourceSignal] = []

    /// A signal that is never raised (tests, library use).
    public init() {
        shards = (0..<Self.shardCount).map { _ in SleepingMutex(Shard()) }
    }

    /// Whether a stop was asked for.
    public var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Marks the stop as requested (signal handlers and tests) and wakes every ``stopped()`` waiter.
    /// - Returns: whether it had been requested before.
    @discardableResult
    public func request() -> Bool {
        let before = requested.exchange(true, ordering: .sequentiallyConsistent)
        for shard in shards {
            let (waiters, actions) = shard.withLock { shard in
                defer { shard = Shard() }
                return (Array(shard.waiters.values), Array(shard.actions.values))
            }
            for waiter in waiters { waiter.resume() }
            for action in actions { action() }
        }
        return before
    }

    /// A new key and its shard.
    private func newKey() -> (Int, SleepingMutex<Shard>) {
        let key = nextKey.wrappingAdd(1, ordering: .relaxed).oldValue
        return (key, shard(of: key))
    }

    /// The shard a key's waiter or action is kept in: its low bits.
    private func shard(of key: Int) -> SleepingMutex<Shard> {
        shards[key & (Self.shardCount - 1)]
    }

    /// Has `action` called once a stop is requested (on the requesting thread), or at once on this one when it
    /// already was. For waits that end without a task of their own waiting on ``stopped()``.
    /// - Returns: the key that ``forget(_:)`` takes back, nil when `action` was called at once.
    func whenRequested(_ action: @escaping @Sendable () -> Void) -> Int? {
        let (key, shard) = newKey()
        let registered = shard.withLock { shard in
            if requested.load(ordering: .sequentiallyConsistent) { return false }
            shard.actions[key] = action
            return true
        }
        if !registered { action() }
        return registered ? key : nil
    }

    /// Takes back an action of ``whenRequested(_:)`` not called yet.
    func forget(_ key: Int) {
        _ = shard(of: key).withLock { $0.actions.removeValue(forKey: key) }
    }

    /// Returns once a stop is requested, or when the calling task is cancelled (whichever comes first).
    public func stopped() async {
        let (id, shard) = newKey()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = shard.withLock { shard in
                    if requested.load(ordering: .sequentiallyConsistent) || Task.isCancelled { return true }
                    shard.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = shard.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// Installs handlers for SIGTERM and SIGINT; the stop notice is a log event on `logger` (so `--log-format json`
    /// stays one JSON object a line).
    public func install(logger: Logger) {
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                if request() {
                    // `_exit`, not `exit`: the atexit handlers (OpenSSL's cleanup among them) would free what the
                    // threads still in libpq or libcurl are using.
                    fflush(nil)
                    _exit(ExitStatus.temporary)
                }
                logger.warning(
                    "stopping after the page in hand (signal again to stop at once)", metadata: ["signal": "\(name)"])
            }
            source.resume()
            Self.retained.append(source)
        }
    }
}
