/// An App Store Server API error code. Unknown codes are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/error_codes)
public struct APIErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as Apple sends it.
    public var rawValue: Int64

    /// Wraps any code.
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// 4000005: the revision token is invalid.
    public static let invalidRevision = APIErrorCode(rawValue: 4_000_005)
    /// 4000006: the transaction identifier is invalid.
    public static let invalidTransactionId = APIErrorCode(rawValue: 4_000_006)
    /// 4000012: the start date is too far in the past.
    public static let startDateTooFarInPast = APIErrorCode(rawValue: 4_000_012)
    /// 4000014: the pagination token is invalid.
    public static let invalidPaginationToken = APIErrorCode(rawValue: 4_000_014)
    /// 4000017: the pagination token has expired.
    public static let paginationTokenExpired = APIErrorCode(rawValue: 4_000_017)
    /// 4040001: account not found (final).
    public static let accountNotFound = APIErrorCode(rawValue: 4_040_001)
    /// 4040002: account not found, retryable: try again later.
    public static let accountNotFoundRetryable = APIErrorCode(rawValue: 4_040_002)
    /// 4040003: app not found (final).
    public static let appNotFound = APIErrorCode(rawValue: 4_040_003)
    /// 4040004: app not found, retryable: try again later.
    public static let appNotFoundRetryable = APIErrorCode(rawValue: 4_040_004)
    /// 4040005: original transaction id not found (final).
    public static let originalTransactionIdNotFound = APIErrorCode(rawValue: 4_040_005)
    /// 4040006: original transaction id not found, retryable: try again later.
    public static let originalTransactionIdNotFoundRetryable = APIErrorCode(rawValue: 4_040_006)
    /// 4040010: no such transaction in this environment (try the other one).
    public static let transactionIdNotFound = APIErrorCode(rawValue: 4_040_010)
    /// 4290000: rate limit exceeded.
    public static let rateLimitExceeded = APIErrorCode(rawValue: 4_290_000)
    /// 5000000: general internal error.
    public static let generalInternal = APIErrorCode(rawValue: 5_000_000)
    /// 5000001: general internal error, retryable.
    public static let generalInternalRetryable = APIErrorCode(rawValue: 5_000_001)

    /// Apple's "not found, retryable" codes (4040002, 4040004, 4040006): retried with backoff like a 5xx; when the
    /// retries run out the answer means "ask again on a later run", never "this customer does not exist".
    public var isRetryableNotFound: Bool {
        self == .accountNotFoundRetryable || self == .appNotFoundRetryable
            || self == .originalTransactionIdNotFoundRetryable
    }

    /// Whether the code says the transaction (or its customer) is unknown to this environment: 4040010, and the final
    /// 4040001 (account) and 4040005 (original transaction id), which callers treat exactly as 4040010 (ask the other
    /// environment when falling back; otherwise the customer is unknown).
    public var meansTransactionNotFound: Bool {
        self == .transactionIdNotFound || self == .accountNotFound || self == .originalTransactionIdNotFound
    }

    /// The number, with Apple's name for it when known.
    public var description: String {
        let names: [Int64: String] = [
            4_000_005: "InvalidRevision", 4_000_006: "InvalidTransactionId", 4_000_012: "StartDateTooFarInPast",
            4_000_014: "InvalidPaginationToken", 4_000_017: "PaginationTokenExpired",
            4_040_001: "AccountNotFound", 4_040_002: "AccountNotFoundRetryable", 4_040_003: "AppNotFound",
            4_040_004: "AppNotFoundRetryable", 4_040_005: "OriginalTransactionIdNotFound",
            4_040_006: "OriginalTransactionIdNotFoundRetryable", 4_040_010: "TransactionIdNotFound",
            4_290_000: "RateLimitExceeded", 5_000_000: "GeneralInternal",
            5_000_001: "GeneralInternalRetryable",
        ]
        guard let name = names[rawValue] else { return String(rawValue) }
        return "\(rawValue) \(name)"
    }
}
