import Foundation
import Synchronization

/// The progress lines at the bottom of a terminal: one per running app, each rewritten in place, and log events
/// printed above them. It owns stderr while lines are shown, so that a log event and a progress update never
/// interleave: the block is erased, the event written, and the block drawn again below it.
///
/// Only a terminal gets the block (``ProgressDisplay`` is silent otherwise); the escape sequences are the common
/// VT100 ones (cursor up, erase to the end of the screen).
public final class ProgressBoard: Sendable {
    private struct State {
        /// The lines, in the order their keys first appeared.
        var keys: [String] = []
        var lines: [String: String] = [:]
        /// How many lines are on the screen now.
        var drawn = 0
    }

    /// The process's board (stderr).
    public static let shared = ProgressBoard()

    private let state = Mutex(State())
    private let write: @Sendable (String) -> Void

    /// A board that writes to `write` (stderr by default).
    public init(write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.write = write
    }

    /// Sets the line of `key` (an app) and draws the block.
    public func update(_ key: String, _ line: String) {
        state.withLock { state in
            if state.lines[key] == nil { state.keys.append(key) }
            state.lines[key] = line
            write(Self.erase(state.drawn) + Self.block(state))
            state.drawn = state.keys.count
        }
    }

    /// Removes the line of `key` and draws what is left.
    public func remove(_ key: String) {
        state.withLock { state in
            guard state.lines.removeValue(forKey: key) != nil else { return }
            state.keys.removeAll { $0 == key }
            write(Self.erase(state.drawn) + Self.block(state))
            state.drawn = state.keys.count
        }
    }

    /// Writes a log event (a whole line, with its line break) above the block.
    public func print(_ event: String) {
        state.withLock { state in
            write(Self.erase(state.drawn) + event + Self.block(state))
            state.drawn = state.keys.count
        }
    }

    /// Moves to the first line of a block of `lines` lines and erases it and everything below.
    static func erase(_ lines: Int) -> String {
        lines > 1 ? "\r\u{1B}[\(lines - 1)A\u{1B}[J" : "\r\u{1B}[J"
    }

    /// The lines, one per key, without a line break after the last (the cursor stays on the block).
    private static func block(_ state: State) -> String {
        state.keys.compactMap { state.lines[$0] }.joined(separator: "\n")
    }
}
