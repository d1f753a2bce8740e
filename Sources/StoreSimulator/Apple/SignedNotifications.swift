import Synchronization

/// Signed notifications already made, by event. Apple signs a notification once, when it sends it, and Notification
/// History lists that same signed payload every time: a client reading its overlap again gets the stored strings, not
/// new signatures (three ECDSA signatures a notification, most of a history page's cost).
final class SignedNotifications: Sendable {
    /// The most bytes of payloads kept (a signed notification is some 15 KB: about 2,000 of them, 100 pages); past
    /// it, all are forgotten and signed again when asked.
    static let mostBytes = 32 << 20

    private struct Stored {
        var payloads: [NotificationEvent: String] = [:]
        var bytes = 0
    }

    private let stored = Mutex(Stored())

    /// The signed payload made for `event` before, if it is still kept.
    func payload(of event: NotificationEvent) -> String? {
        stored.withLock { $0.payloads[event] }
    }

    /// Keeps the signed payload of an event whose payload the scenario alone decides.
    func remember(_ payload: String, of event: NotificationEvent) {
        stored.withLock { stored in
            if stored.bytes + payload.utf8.count > Self.mostBytes {
                stored.payloads.removeAll(keepingCapacity: true)
                stored.bytes = 0
            }
            if stored.payloads.updateValue(payload, forKey: event) == nil { stored.bytes += payload.utf8.count }
        }
    }

    /// How many are kept (for tests).
    var count: Int { stored.withLock { $0.payloads.count } }
}
