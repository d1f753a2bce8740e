/// The fault rates of one endpoint: each a probability in 0...1 per call.
public struct FaultSettings: Sendable, Equatable, Codable {
    /// Probability per fault kind; missing kinds are 0.
    public var rates: [FaultKind: Double]
    /// How late a slow answer is, in milliseconds.
    public var slowMillis: Int

    /// Creates settings.
    public init(rates: [FaultKind: Double] = [:], slowMillis: Int = 2000) {
        self.rates = rates
        self.slowMillis = slowMillis
    }

    /// The rate of one kind.
    public func rate(_ kind: FaultKind) -> Double {
        rates[kind] ?? 0
    }

    /// No faults.
    public static let none = FaultSettings()
}
