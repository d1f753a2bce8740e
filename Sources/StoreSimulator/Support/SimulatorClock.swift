import Foundation
import Synchronization

/// The simulator's idea of now, in milliseconds since 1970. Either fixed (it moves only when told to, so tests
/// play several nights in a second) or following the wall clock with an offset. Events in a scenario become
/// visible when the clock reaches them.
public final class SimulatorClock: Sendable {
    /// How the clock starts.
    public enum Mode: Sendable, Equatable {
        /// Frozen at a time; moves only through ``set(millis:)`` and ``advance(millis:)``.
        case fixed(startMillis: Int64)
        /// The wall clock plus an offset (0 = real time); `set` and `advance` change the offset.
        case realTime(offsetMillis: Int64)
    }

    private enum State {
        case fixed(Int64)
        case offset(Int64)
    }

    private let state: Mutex<State>

    /// Creates a clock.
    public init(_ mode: Mode) {
        switch mode {
        case .fixed(let start): state = Mutex(.fixed(start))
        case .realTime(let offset): state = Mutex(.offset(offset))
        }
    }

    /// The wall clock, in milliseconds since 1970.
    public static func wallMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Now, in milliseconds since 1970.
    public func nowMillis() -> Int64 {
        state.withLock { state in
            switch state {
            case .fixed(let value): value
            case .offset(let offset): Self.wallMillis() + offset
            }
        }
    }

    /// Whether the clock follows the wall clock.
    public var followsWallClock: Bool {
        state.withLock { state in
            if case .offset = state { return true }
            return false
        }
    }

    /// Sets now.
    public func set(millis: Int64) {
        state.withLock { state in
            switch state {
            case .fixed: state = .fixed(millis)
            case .offset: state = .offset(millis - Self.wallMillis())
            }
        }
    }

    /// Moves now forward (or back, with a negative amount).
    public func advance(millis: Int64) {
        state.withLock { state in
            switch state {
            case .fixed(let value): state = .fixed(value + millis)
            case .offset(let offset): state = .offset(offset + millis)
            }
        }
    }
}
