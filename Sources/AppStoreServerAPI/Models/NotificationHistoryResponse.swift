/// One page of notification history (Get Notification History): at most 20 notifications.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/notificationhistoryresponse)
public struct NotificationHistoryResponse: Decodable, Sendable, Hashable {
    /// The token for the next page.
    public var paginationToken: String?
    /// Whether another page follows; `false` when absent.
    public var hasMore: Bool
    /// The notifications; empty when absent.
    public var notificationHistory: [NotificationHistoryResponseItem]
    /// Items of the list that could not be read (left out of it): the job logs and counts them.
    public var unreadableItems = 0

    enum CodingKeys: String, CodingKey {
        case paginationToken, hasMore, notificationHistory
    }

    /// Decodes leniently, but a list or `hasMore` that is not one fails the page.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        paginationToken = c.lenientString(.paginationToken)
        hasMore = try c.pageFlag(.hasMore)
        (notificationHistory, unreadableItems) = try c.pageList(.notificationHistory)
    }
}
