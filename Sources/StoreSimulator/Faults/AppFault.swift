/// A fault that strikes every call of one app, whatever the endpoint, so that one simulator can play a fleet in
/// which one app's store misbehaves while the others answer as usual (``StoreSimulator/setFault(_:app:)``).
public enum AppFault: String, Sendable, Codable, CaseIterable {
    /// The store stops answering: each call of the app is held, unanswered and not counted, until the fault is
    /// lifted (then it is answered as usual).
    case hang
    /// The app's credentials are refused: every call answers 401, as for a revoked key or service account.
    case unauthorized
}
