import Synchronization

/// Decides, per call, which faults strike. The decision for the n-th call to an endpoint depends only on the seed,
/// the endpoint, n and the rates, so a run that makes the same calls sees the same faults.
final class FaultInjector: Sendable {
    private struct State {
        var settings: [SimulatorEndpoint: FaultSettings]
        var calls: [SimulatorEndpoint: UInt64] = [:]
    }

    private let seed: UInt64
    private let state: Mutex<State>

    init(seed: UInt64, settings: [SimulatorEndpoint: FaultSettings]) {
        self.seed = seed
        state = Mutex(State(settings: settings))
    }

    /// The faults for the next call to an endpoint, how late a slow answer should be, and the call's number (0 for
    /// the first call to the endpoint; faults with several forms take them in turn by it).
    func draw(for endpoint: SimulatorEndpoint) -> (faults: Set<FaultKind>, slowMillis: Int, call: UInt64) {
        state.withLock { state in
            let settings = state.settings[endpoint] ?? .none
            let call = state.calls[endpoint, default: 0]
            state.calls[endpoint] = call + 1
            var faults: Set<FaultKind> = []
            for (index, kind) in FaultKind.allCases.enumerated() {
                let rate = settings.rate(kind)
                guard rate > 0 else { continue }
                let bits = SplitMix64.mix(seed, SplitMix64.hash(endpoint.rawValue), call, UInt64(index))
                if Double(bits >> 11) * 0x1.0p-53 < rate { faults.insert(kind) }
            }
            return (faults, settings.slowMillis, call)
        }
    }

    /// Replaces one endpoint's settings.
    func set(_ settings: FaultSettings, for endpoint: SimulatorEndpoint) {
        state.withLock { $0.settings[endpoint] = settings }
    }

    /// Replaces all settings.
    func setAll(_ settings: [SimulatorEndpoint: FaultSettings]) {
        state.withLock { $0.settings = settings }
    }

    /// The current settings.
    func settings() -> [SimulatorEndpoint: FaultSettings] {
        state.withLock { $0.settings }
    }
}
