import Foundation
import Synchronization

/// SIGTERM / SIGINT handling for batch jobs: the first signal asks jobs to finish the page in hand, save, and stop
/// (exit 75); jobs poll ``isRequested`` between pages. A second signal exits at once (progress is still safe:
/// every page commits with its checkpoint).
public final class ShutdownSignal: Sendable {
    private let requested = Mutex(false)
    // The dispatch sources must stay alive for the process; install() runs once, from the main command, before
    // any job starts, so this is never touched concurrently.
    nonisolated(unsafe) private static var retained: [any DispatchSourceSignal] = []

    /// A signal that is never raised (tests, library use).
    public init() {}

    /// Whether a stop was asked for.
    public var isRequested: Bool { requested.withLock { $0 } }

    /// Marks the stop as requested (signal handlers and tests).
    public func request() { requested.withLock { $0 = true } }

    /// Installs handlers for SIGTERM and SIGINT.
    public func install() {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                let again = requested.withLock { value in
                    defer { value = true }
                    return value
                }
                if again { exit(75) }
                FileHandle.standardError.write(
                    Data("storerecon: stopping after the page in hand (signal again to stop at once)\n".utf8))
            }
            source.resume()
            Self.retained.append(source)
        }
    }
}
