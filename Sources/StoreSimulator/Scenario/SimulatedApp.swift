/// One app in a scenario: an Apple app (bundle id, numeric app id) or a Google app (package name).
public struct SimulatedApp: Codable, Sendable, Equatable {
    /// The store an app is sold through.
    public enum Platform: String, Codable, Sendable {
        case apple, google
    }

    /// storerecon's id for the app (`apps[].id` in its configuration).
    public var id: String
    /// Which store.
    public var platform: Platform
    /// Apple: the bundle id. Google: the package name.
    public var storeId: String
    /// Apple: the numeric app id (`appAppleId`).
    public var appAppleId: Int64?

    /// Creates an app.
    public init(id: String, platform: Platform, storeId: String, appAppleId: Int64? = nil) {
        self.id = id
        self.platform = platform
        self.storeId = storeId
        self.appAppleId = appAppleId
    }

    /// The default pair: one Apple app and one Google app.
    public static let defaults: [SimulatedApp] = [
        SimulatedApp(id: "demo-ios", platform: .apple, storeId: "com.example.demo", appAppleId: 1_234_567_890),
        SimulatedApp(id: "demo-android", platform: .google, storeId: "com.example.demo"),
    ]
}
