/// The server environment a payload or response comes from. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/environment)
public struct Environment: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `Production`.
    public static let production = Environment(rawValue: "Production")
    /// `Sandbox`.
    public static let sandbox = Environment(rawValue: "Sandbox")
    /// `Xcode`.
    public static let xcode = Environment(rawValue: "Xcode")
    /// `LocalTesting`.
    public static let localTesting = Environment(rawValue: "LocalTesting")
}
