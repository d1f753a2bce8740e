import Foundation
import StoreHTTP

/// One page of `purchases.voidedpurchases.list`.
///
/// See [purchases.voidedpurchases.list](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list)
/// and [VoidedPurchasesListResponse](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list#response-body).
public struct VoidedPurchasesListResponse: Sendable, Equatable, Decodable {
    /// `tokenPagination`: where the next page starts.
    public struct TokenPagination: Sendable, Equatable, Codable {
        /// The token for the next page; absent on the last page.
        public var nextPageToken: String?
        /// The token for the previous page, if Google sends one.
        public var previousPageToken: String?

        /// Creates pagination info.
        public init(nextPageToken: String? = nil, previousPageToken: String? = nil) {
            self.nextPageToken = nextPageToken
            self.previousPageToken = previousPageToken
        }
    }

    /// `pageInfo`: Google's general page information.
    public struct PageInfo: Sendable, Equatable, Codable {
        /// Results in this page.
        public var resultPerPage: Int32?
        /// Index of the first result.
        public var startIndex: Int32?
        /// Total results available.
        public var totalResults: Int32?

        /// Creates page info.
        public init(resultPerPage: Int32? = nil, startIndex: Int32? = nil, totalResults: Int32? = nil) {
            self.resultPerPage = resultPerPage
            self.startIndex = startIndex
            self.totalResults = totalResults
        }
    }

    /// Token pagination; `tokenPagination.nextPageToken` absent means this is the last page.
    public var tokenPagination: TokenPagination?
    /// Page information.
    public var pageInfo: PageInfo?
    /// The voided purchases, oldest first; empty when Google left the array out (nothing matched).
    public var voidedPurchases: [VoidedPurchase]
    /// Rows of the page that could not be decoded (a key field missing, a value of the wrong JSON type), each with
    /// its JSON as sent and the reason: one odd row never fails its page. Filled by ``init(json:)``.
    public var undecodableRows: [UndecodableRow] = []

    /// A row of a page that could not be decoded.
    public struct UndecodableRow: Sendable, Equatable {
        /// Its position in the page (0-based).
        public var index: Int
        /// The row's JSON as sent.
        public var rawJSON: Data
        /// The field that failed, as a path within the row (`voidedTimeMillis`), when known.
        public var field: String?
        /// What was wrong.
        public var message: String
        /// The row's `orderId`, when it has a string one.
        public var orderId: String?
    }

    /// The token for the next page, or `nil` on the last page (an empty token counts as none).
    public var nextPageToken: String? {
        guard let token = tokenPagination?.nextPageToken, !token.isEmpty else { return nil }
        return token
    }

    /// Creates a page.
    public init(tokenPagination: TokenPagination? = nil, pageInfo: PageInfo? = nil, voidedPurchases: [VoidedPurchase]) {
        self.tokenPagination = tokenPagination
        self.pageInfo = pageInfo
        self.voidedPurchases = voidedPurchases
    }

    enum CodingKeys: String, CodingKey {
        case tokenPagination, pageInfo, voidedPurchases
    }

    /// Decodes a page; rows' ``VoidedPurchase/rawJSON`` stay empty (use ``init(json:)`` to keep them).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tokenPagination = try container.decodeIfPresent(TokenPagination.self, forKey: .tokenPagination)
        pageInfo = try container.decodeIfPresent(PageInfo.self, forKey: .pageInfo)
        voidedPurchases = try container.decodeIfPresent([VoidedPurchase].self, forKey: .voidedPurchases) ?? []
    }

    /// Decodes a response body and keeps each row's JSON object as sent (``VoidedPurchase/rawJSON``).
    /// - Throws: `DecodingError` whose coding path names the field that failed.
    public init(json: Data) throws {
        if let page = VoidedPageFastDecoder.decode(json) {
            self = page
            return
        }
        try self.init(jsonDecoding: json)
    }

    /// ``init(json:)`` through JSONDecoder only (the reference the fast path is tested against).
    init(jsonDecoding json: Data) throws {
        let decoder = JSONDecoder()
        decoder.userInfo[.playCodesAreStrings] = JSONMemberArraySlicer.valueIsString(of: "voidedReason", in: json)
        do {
            self = try decoder.decode(Self.self, from: json)
        } catch let error as DecodingError {
            // One row the decoder refuses must not fail the page: decode the rows one by one, keeping the others.
            guard let page = try? Self(rowByRow: json, decoder: decoder) else { throw error }
            self = page
            return
        }
        if let ranges = JSONMemberArraySlicer.elementRanges(of: "voidedPurchases", in: json),
            ranges.count == voidedPurchases.count
        {
            for index in voidedPurchases.indices {
                voidedPurchases[index].rawJSON = Data(json[ranges[index]])
            }
        } else {
            // The slicer covers every valid JSON document; this is a safety net, not a path taken in practice.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for index in voidedPurchases.indices {
                voidedPurchases[index].rawJSON = try encoder.encode(voidedPurchases[index])
            }
        }
    }

    /// Decodes the page's envelope, then each row on its own: the rows that decode are kept (with their JSON), the
    /// others are listed in ``undecodableRows``. Throws when the envelope itself is not a page.
    private init(rowByRow json: Data, decoder: JSONDecoder) throws {
        struct Envelope: Decodable {
            var tokenPagination: TokenPagination?
            var pageInfo: PageInfo?
        }
        struct OrderIdOnly: Decodable { var orderId: String? }
        guard let ranges = JSONMemberArraySlicer.elementRanges(of: "voidedPurchases", in: json) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "voidedPurchases is not an array"))
        }
        // The envelope without the rows, so that a row JSON itself refuses (an unpaired surrogate escape) is that
        // row's problem only.
        var outside = json
        if let first = ranges.first, let last = ranges.last {
            outside = Data(json[..<first.lowerBound]) + Data(json[last.upperBound...])
        }
        let envelope = try decoder.decode(Envelope.self, from: outside)
        self.init(tokenPagination: envelope.tokenPagination, pageInfo: envelope.pageInfo, voidedPurchases: [])
        for (index, range) in ranges.enumerated() {
            let raw = Data(json[range])
            do {
                var row = try decoder.decode(VoidedPurchase.self, from: raw)
                row.rawJSON = raw
                voidedPurchases.append(row)
            } catch let error as DecodingError {
                let (field, message) = DecodingError.describe(error)
                let orderId = (try? decoder.decode(OrderIdOnly.self, from: raw))?.orderId
                undecodableRows.append(
                    UndecodableRow(index: index, rawJSON: raw, field: field, message: message, orderId: orderId))
            }
        }
    }
}
