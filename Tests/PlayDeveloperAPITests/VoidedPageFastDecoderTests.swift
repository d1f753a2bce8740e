import Foundation
import Testing

@testable import PlayDeveloperAPI

/// The one-pass page decoder must give exactly what JSONDecoder gives, raw row JSON included, and step aside for
/// anything it does not fully understand.
@Suite struct VoidedPageFastDecoderTests {
    static let row1 = #"""
        {"kind": "androidpublisher#voidedPurchase", "purchaseToken": "tok.AO-J1O1", "purchaseTimeMillis": "1788000000123",
         "voidedTimeMillis": "1789000000456", "orderId": "GPA.3312-1234-5678-90123", "voidedSource": "0", "voidedReason": "1"}
        """#
    static let row2 =
        #"{"purchaseToken":"tok-2","purchaseTimeMillis":1788000001000,"voidedTimeMillis":1789000001000,"orderId":"GPA.1..1","voidedSource":2,"voidedReason":7}"#
    static let row3 =
        #"{"purchaseToken":"tök-3 ✓","voidedTimeMillis":"-5","voidedSource":9,"voidedReason":"FRIENDLY_FRAUD","voidedQuantity":"2"}"#
    static let row4 =
        #"{ "voidedQuantity" : 3 , "voidedReason" : "-1" , "voidedSource" : "SOMETHING_NEW" , "voidedTimeMillis" : 0 , "purchaseToken" : "" }"#

    static let understood: [String] = [
        "{}",
        #"{"voidedPurchases":[]}"#,
        #"{"tokenPagination":{"nextPageToken":""}}"#,
        """
        {
          "pageInfo": {"totalResults": 4, "resultPerPage": 4, "startIndex": 0},
          "tokenPagination": {"nextPageToken": "CgwI+ZuQwQYQgJ/a5QI=/next", "previousPageToken": "p"},
          "voidedPurchases": [\(row1), \(row2),
            \(row3),\(row4)]
        }

        """,
        #"{"voidedPurchases":[\#(row2)],"tokenPagination":{"nextPageToken":"n"}}"#,
    ]

    @Test(arguments: understood)
    func givesWhatJSONDecoderGives(json: String) throws {
        let data = Data(json.utf8)
        let fast = try #require(VoidedPageFastDecoder.decode(data), "the fast path should take this page")
        let reference = try VoidedPurchasesListResponse(jsonDecoding: data)
        #expect(fast == reference)
        #expect(fast.voidedPurchases.map(\.rawJSON) == reference.voidedPurchases.map(\.rawJSON))
        #expect(try VoidedPurchasesListResponse(json: data) == reference)
    }

    @Test func readsTheValuesOfAPage() throws {
        let page = try #require(VoidedPageFastDecoder.decode(Data(Self.understood[3].utf8)))
        #expect(page.nextPageToken == "CgwI+ZuQwQYQgJ/a5QI=/next")
        #expect(page.pageInfo == .init(resultPerPage: 4, startIndex: 0, totalResults: 4))
        try #require(page.voidedPurchases.count == 4)
        let rows = page.voidedPurchases
        #expect(rows[0].purchaseTimeMillis == 1_788_000_000_123 && rows[0].voidedTimeMillis == 1_789_000_000_456)
        #expect(rows[0].voidedSource == .user && rows[0].voidedReason == .remorse && rows[0].voidedQuantity == nil)
        #expect(rows[1].voidedReason == .chargeback && rows[1].kind == nil && rows[1].orderId == "GPA.1..1")
        #expect(rows[2].purchaseToken == "tök-3 ✓" && rows[2].voidedTimeMillis == -5)
        #expect(rows[2].voidedSource?.code == 9 && rows[2].voidedSource?.label == "unknown")
        #expect(rows[2].voidedReason == .friendlyFraud && rows[2].voidedQuantity == 2)
        #expect(rows[3].voidedReason?.code == -1 && rows[3].voidedSource?.code == nil)
        #expect(String(decoding: rows[1].rawJSON, as: UTF8.self) == Self.row2)
    }

    static let declined: [String] = [
        #"{"voidedPurchases":[{"purchaseToken":"a\"b","voidedTimeMillis":"1"}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"a\u0041","voidedTimeMillis":"1"}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1","refundType":1}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1","orderId":null}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1","voidedTimeMillis":"2"}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":1.5}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":01}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":1e3}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"12x"}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1","voidedQuantity":"9999999999"}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1","voidedReason":4294967296}]}"#,
        #"{"voidedPurchases":[{"voidedTimeMillis":"1"}]}"#,
        #"{"voidedPurchases":[{"purchaseToken":7,"voidedTimeMillis":"1"}]}"#,
        #"{"voidedPurchases":{"purchaseToken":"t"}}"#,
        #"{"kind":"androidpublisher#voidedPurchasesListResponse"}"#,
        #"{"tokenPagination":{"nextPageToken":5}}"#,
        #"{"pageInfo":{"totalResults":"3"}}"#,
        #"{} x"#,
        #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1"}"#,
        "",
    ]

    @Test(arguments: declined)
    func stepsAsideForAnythingElse(json: String) throws {
        #expect(VoidedPageFastDecoder.decode(Data(json.utf8)) == nil)
    }

    @Test func aSliceOfALargerBufferKeepsItsOwnIndices() throws {
        let body = Data(("xx" + Self.understood[3]).utf8).dropFirst(2)
        let page = try #require(VoidedPageFastDecoder.decode(body))
        #expect(String(decoding: page.voidedPurchases[1].rawJSON, as: UTF8.self) == Self.row2)
    }
}
