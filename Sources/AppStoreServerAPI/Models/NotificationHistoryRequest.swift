import Foundation

/// The body of a Get Notification History request. Send the same body for every page.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/notificationhistoryrequest)
public struct NotificationHistoryRequest: Encodable, Sendable, Hashable {
    /// The start of the window (Apple keeps 180 days in production, 30 in sandbox).
    public var startDate: Date
    /// The end of the window.
    public var endDate: Date
    /// Only notifications of this type (not together with ``transactionId``).
    public var notificationType: NotificationTypeV2?
    /// Only notifications of this subtype.
    public var notificationSubtype: Subtype?
    /// Only notifications about this customer's transactions (not together with ``notificationType``).
    public var transactionId: String?
    /// Only notifications that failed to reach the app's server.
    public var onlyFailures: Bool?

    /// Creates a request.
    public init(
        startDate: Date, endDate: Date, notificationType: NotificationTypeV2? = nil,
        notificationSubtype: Subtype? = nil, transactionId: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }

    enum CodingKeys: String, CodingKey {
        case startDate, endDate, notificationType, notificationSubtype, transactionId, onlyFailures
    }

    /// Encodes dates as milliseconds since 1970 and leaves out absent filters.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(startDate.millisecondsSince1970, forKey: .startDate)
        try c.encode(endDate.millisecondsSince1970, forKey: .endDate)
        try c.encodeIfPresent(notificationType, forKey: .notificationType)
        try c.encodeIfPresent(notificationSubtype, forKey: .notificationSubtype)
        try c.encodeIfPresent(transactionId, forKey: .transactionId)
        try c.encodeIfPresent(onlyFailures, forKey: .onlyFailures)
    }
}
