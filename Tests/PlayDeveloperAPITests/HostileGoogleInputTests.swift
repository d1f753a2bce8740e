import Foundation
import TestSupport
import Testing

@testable import PlayDeveloperAPI

/// Property tests over hostile input: thousands of seeded mutations of Google's answers and of RFC 3339 text.
/// Nothing may crash or hang; failures are `DecodingError`s the client turns into a message naming the field; what
/// decodes keeps each row's JSON exactly as the row was decoded.
@Suite struct HostileGoogleInputTests {
    static let cases = 3000

    static func checkDecodingError(_ error: any Error, case index: Int) {
        guard let error = error as? DecodingError else {
            Issue.record("case \(index): \(type(of: error)) is not a DecodingError: \(error)")
            return
        }
        let described = PlayDeveloperClient.describe(error)
        #expect(!described.message.isEmpty, "case \(index)")
    }

    /// A page that decodes keeps, for every row, JSON that decodes to that same row.
    static func checkRawJSON(_ page: VoidedPurchasesListResponse, case index: Int) {
        for row in page.voidedPurchases {
            var decoded = try? JSONDecoder().decode(VoidedPurchase.self, from: row.rawJSON)
            decoded?.rawJSON = row.rawJSON
            #expect(
                decoded == row, "case \(index): raw JSON \(String(decoding: row.rawJSON.prefix(200), as: UTF8.self))")
        }
    }

    @Test(arguments: ["voidedpurchases-list.json", "voidedpurchases-empty.json"])
    func mutatedVoidedPagesDecodeWithTheirOwnJSONOrFailNamingTheField(fixture: String) throws {
        let sample = Array(try Fixtures.data(fixture))
        var input = HostileInput(seed: UInt64(sample.count) &* 31)
        var decoded = 0
        for index in 0..<Self.cases {
            let body = Data(input.mutate(sample))
            do {
                let page = try VoidedPurchasesListResponse(json: body)
                decoded += 1
                Self.checkRawJSON(page, case: index)
            } catch {
                Self.checkDecodingError(error, case: index)
            }
        }
        #expect(decoded > 0, "no mutation decoded: the raw-JSON property was never checked")
    }

    /// Rows whose fields hold hostile strings (quotes, backslashes, escapes, NUL, odd Unicode, long runs) decode to
    /// exactly those strings, and each row's JSON is the row's own.
    @Test func hostileFieldValuesRoundTripThroughAPage() throws {
        var input = HostileInput(seed: 77)
        for index in 0..<500 {
            let rows: [[String: Any]] = (0..<input.int(1...4)).map { _ in
                [
                    "kind": "androidpublisher#voidedPurchase", "purchaseToken": input.hostileString(maxRun: 300),
                    "orderId": input.hostileString(maxRun: 300), "voidedTimeMillis": "1789000000456",
                    "purchaseTimeMillis": 1_788_000_000_123, "voidedSource": 1, "voidedReason": "2",
                    input.hostileString(maxRun: 20): input.hostileString(maxRun: 20),
                ]
            }
            let page: [String: Any] = [
                "tokenPagination": ["nextPageToken": input.hostileString(maxRun: 100)], "voidedPurchases": rows,
            ]
            let body = try JSONSerialization.data(withJSONObject: page)
            let decoded = try VoidedPurchasesListResponse(json: body)
            #expect(decoded.voidedPurchases.map(\.orderId) == rows.map { $0["orderId"] as? String }, "case \(index)")
            #expect(decoded.voidedPurchases.map(\.purchaseToken) == rows.map { $0["purchaseToken"] as! String })
            Self.checkRawJSON(decoded, case: index)
        }
    }

    /// The same member twice: whichever copy the decoder keeps, the rows' JSON is theirs.
    @Test func aDuplicatedRowArrayKeepsEachRowsOwnJSON() throws {
        let body = Data(
            #"""
            {"voidedPurchases":[{"purchaseToken":"first","orderId":"GPA.1","voidedTimeMillis":"1"}],
             "voidedPurchases":[{"purchaseToken":"second","orderId":"GPA.2","voidedTimeMillis":"2"}]}
            """#.utf8)
        let page = try VoidedPurchasesListResponse(json: body)
        try #require(page.voidedPurchases.count == 1)
        Self.checkRawJSON(page, case: 0)
    }

    @Test(arguments: ["subscriptionsv2-active.json", "subscriptionsv2-canceled.json"])
    func mutatedSubscriptionsDecodeOrFailNamingTheField(fixture: String) throws {
        let sample = Array(try Fixtures.data(fixture))
        var input = HostileInput(seed: UInt64(sample.count) &* 17)
        for index in 0..<Self.cases {
            do {
                let subscription = try SubscriptionPurchaseV2(json: Data(input.mutate(sample)))
                #expect(!subscription.rawJSON.isEmpty, "case \(index)")
            } catch {
                Self.checkDecodingError(error, case: index)
            }
        }
    }

    @Test func mutatedErrorBodiesNeverCrashTheClassifier() throws {
        let samples = try ["error-401-token.json", "error-403-per-day.json", "error-429.json", "error-503.json"].map {
            Array(try Fixtures.data($0))
        }
        var input = HostileInput(seed: 403)
        for index in 0..<Self.cases {
            let body = GoogleErrorResponse(json: Data(input.mutate(input.pick(samples))))
            let disposition = PlayResponseClassifier.classify(
                status: input.pick([400, 401, 403, 404, 429, 500, 503]),
                headers: ["retry-after": input.hostileString(maxRun: 50)], body: body,
                now: Date(timeIntervalSince1970: 1_800_000_000))
            #expect(!"\(disposition)".isEmpty, "case \(index)")
        }
    }

    /// Every accepted text is a real instant whose canonical form parses back to it; anything else is `nil`.
    @Test func rfc3339AcceptsOnlyRealInstantsAndRoundTrips() {
        let samples = [
            "2026-11-20T10:15:30Z", "2026-11-20T10:15:30.123Z", "2026-11-20T10:15:30.123456789Z",
            "2024-02-29T23:59:59-08:00", "0001-01-02T00:00:00+23:59", "9999-12-31T23:59:59.999999z",
        ]
        var input = HostileInput(seed: 3339)
        var accepted = 0
        for index in 0..<(Self.cases * 3) {
            let text = index.isMultiple(of: 4) ? input.hostileString(maxRun: 40) : input.mutate(input.pick(samples))
            guard let value = RFC3339Timestamp(text) else { continue }
            accepted += 1
            #expect(RFC3339Timestamp(value.description) == value, "case \(index): \(text.debugDescription)")
            #expect((0..<1_000_000_000).contains(value.nanoseconds), "case \(index)")
            #expect(text.utf8.count <= 35, "case \(index): \(text.debugDescription) accepted")
        }
        #expect(accepted > 0)
        for sample in samples { #expect(RFC3339Timestamp(sample) != nil, "\(sample)") }
        #expect(RFC3339Timestamp("2023-02-29T00:00:00Z") == nil)
        #expect(RFC3339Timestamp("2026-11-20T10:15:30Z\0") == nil)
        #expect(RFC3339Timestamp("2026-11-20T10:15:60Z") == nil)
    }
}
