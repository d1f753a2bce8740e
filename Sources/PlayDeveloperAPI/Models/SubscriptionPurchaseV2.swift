import Foundation

/// The state of a subscription purchase, as `purchases.subscriptionsv2.get` returns it.
///
/// Unknown `subscriptionState` values are kept raw; fields this client does not model stay in ``rawJSON``.
/// See [SubscriptionPurchaseV2](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#SubscriptionPurchaseV2).
public struct SubscriptionPurchaseV2: Sendable, Equatable, Decodable {
    /// `canceledStateContext`: why a canceled or expired subscription was canceled.
    ///
    /// See [CanceledStateContext](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#CanceledStateContext).
    public struct CanceledStateContext: Sendable, Equatable, Decodable {
        /// `userInitiatedCancellation`: the user canceled.
        public struct UserInitiatedCancellation: Sendable, Equatable, Decodable {
            /// `cancelSurveyResult.reason`, e.g. `CANCEL_SURVEY_REASON_COST_RELATED`, as sent.
            public var cancelSurveyReason: String?
            /// When the user canceled (access may continue until `expiryTime`).
            public var cancelTime: RFC3339Timestamp?

            /// Creates the context.
            public init(cancelSurveyReason: String? = nil, cancelTime: RFC3339Timestamp? = nil) {
                self.cancelSurveyReason = cancelSurveyReason
                self.cancelTime = cancelTime
            }

            enum CodingKeys: String, CodingKey { case cancelSurveyResult, cancelTime }
            enum SurveyKeys: String, CodingKey { case reason }

            /// Decodes Google's shape (the free-text survey answer is deliberately not kept: it is user input).
            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                cancelTime = try container.decodeIfPresent(RFC3339Timestamp.self, forKey: .cancelTime)
                if try container.isPresent(.cancelSurveyResult) {
                    let survey = try container.nestedContainer(keyedBy: SurveyKeys.self, forKey: .cancelSurveyResult)
                    cancelSurveyReason = try survey.decodeIfPresent(String.self, forKey: .reason)
                }
            }
        }

        /// Present when the user canceled.
        public var userInitiatedCancellation: UserInitiatedCancellation?
        /// The system canceled, e.g. for a billing problem.
        public var systemInitiated: Bool
        /// The developer canceled.
        public var developerInitiated: Bool
        /// The subscription was replaced by a new one (upgrade, downgrade).
        public var replaced: Bool

        /// Creates the context.
        public init(
            userInitiatedCancellation: UserInitiatedCancellation? = nil, systemInitiated: Bool = false,
            developerInitiated: Bool = false, replaced: Bool = false
        ) {
            self.userInitiatedCancellation = userInitiatedCancellation
            self.systemInitiated = systemInitiated
            self.developerInitiated = developerInitiated
            self.replaced = replaced
        }

        enum CodingKeys: String, CodingKey {
            case userInitiatedCancellation, systemInitiatedCancellation, developerInitiatedCancellation
            case replacementCancellation
        }

        /// Decodes Google's shape: each cause is an object, present or absent.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            userInitiatedCancellation = try container.decodeIfPresent(
                UserInitiatedCancellation.self, forKey: .userInitiatedCancellation)
            systemInitiated = try container.isPresent(.systemInitiatedCancellation)
            developerInitiated = try container.isPresent(.developerInitiatedCancellation)
            replaced = try container.isPresent(.replacementCancellation)
        }
    }

    /// `pausedStateContext`: when a paused subscription resumes.
    ///
    /// See [PausedStateContext](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#PausedStateContext).
    public struct PausedStateContext: Sendable, Equatable, Decodable {
        /// When the subscription resumes by itself.
        public var autoResumeTime: RFC3339Timestamp?

        /// Creates the context.
        public init(autoResumeTime: RFC3339Timestamp?) { self.autoResumeTime = autoResumeTime }
    }

    /// `androidpublisher#subscriptionPurchaseV2`.
    public var kind: String?
    /// ISO 3166-1 alpha-2 billing region at the time the subscription was granted.
    public var regionCode: String?
    /// The items; all auto-renewing or all prepaid.
    public var lineItems: [SubscriptionPurchaseLineItem]
    /// When the subscription was granted; absent for pending subscriptions.
    public var startTime: RFC3339Timestamp?
    /// The current state (unknown values kept raw).
    public var subscriptionState: SubscriptionState?
    /// The token this purchase replaced (upgrade, downgrade, re-signup, plan conversion): that token must stop
    /// granting access.
    public var linkedPurchaseToken: String?
    /// Present for paused subscriptions.
    public var pausedStateContext: PausedStateContext?
    /// Present for canceled or expired subscriptions.
    public var canceledStateContext: CanceledStateContext?
    /// Whether the purchase is acknowledged.
    public var acknowledgementState: AcknowledgementState?
    /// `true` when Google sent `testPurchase` (an empty object present only for test purchases).
    public var isTestPurchase: Bool
    /// The response body as sent (for storage as `jsonb`). Filled by ``init(json:)``; empty otherwise.
    public var rawJSON: Data

    /// Creates a subscription state.
    public init(
        kind: String? = "androidpublisher#subscriptionPurchaseV2", regionCode: String? = nil,
        lineItems: [SubscriptionPurchaseLineItem], startTime: RFC3339Timestamp?, subscriptionState: SubscriptionState?,
        linkedPurchaseToken: String? = nil, pausedStateContext: PausedStateContext? = nil,
        canceledStateContext: CanceledStateContext? = nil, acknowledgementState: AcknowledgementState? = nil,
        isTestPurchase: Bool = false, rawJSON: Data = Data()
    ) {
        self.kind = kind
        self.regionCode = regionCode
        self.lineItems = lineItems
        self.startTime = startTime
        self.subscriptionState = subscriptionState
        self.linkedPurchaseToken = linkedPurchaseToken
        self.pausedStateContext = pausedStateContext
        self.canceledStateContext = canceledStateContext
        self.acknowledgementState = acknowledgementState
        self.isTestPurchase = isTestPurchase
        self.rawJSON = rawJSON
    }

    enum CodingKeys: String, CodingKey {
        case kind, regionCode, lineItems, startTime, subscriptionState, linkedPurchaseToken, pausedStateContext
        case canceledStateContext, acknowledgementState, testPurchase
    }

    /// Decodes Google's shape; ``rawJSON`` stays empty (use ``init(json:)`` to keep it).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decodeIfPresent(String.self, forKey: .kind)
        regionCode = try container.decodeIfPresent(String.self, forKey: .regionCode)
        lineItems = try container.decodeIfPresent([SubscriptionPurchaseLineItem].self, forKey: .lineItems) ?? []
        startTime = try container.decodeIfPresent(RFC3339Timestamp.self, forKey: .startTime)
        subscriptionState = try container.decodeIfPresent(SubscriptionState.self, forKey: .subscriptionState)
        linkedPurchaseToken = try container.decodeIfPresent(String.self, forKey: .linkedPurchaseToken)
        pausedStateContext = try container.decodeIfPresent(PausedStateContext.self, forKey: .pausedStateContext)
        canceledStateContext = try container.decodeIfPresent(CanceledStateContext.self, forKey: .canceledStateContext)
        acknowledgementState = try container.decodeIfPresent(AcknowledgementState.self, forKey: .acknowledgementState)
        isTestPurchase = try container.isPresent(.testPurchase)
        rawJSON = Data()
    }

    /// Decodes a response body and keeps it in ``rawJSON``.
    /// - Throws: `DecodingError` whose coding path names the field that failed.
    public init(json: Data) throws {
        self = try JSONDecoder().decode(Self.self, from: json)
        rawJSON = json
    }

    /// The latest ``SubscriptionPurchaseLineItem/expiryTime`` over all items, if any.
    public var latestExpiryTime: RFC3339Timestamp? { lineItems.compactMap(\.expiryTime).max() }
}
