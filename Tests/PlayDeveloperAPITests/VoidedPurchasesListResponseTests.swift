import Foundation
import Testing

@testable import PlayDeveloperAPI

@Suite struct VoidedPurchasesListResponseTests {
    @Test func decodesDiscoveryShapedPage() throws {
        let page = try VoidedPurchasesListResponse(json: Fixtures.data("voidedpurchases-list.json"))
        #expect(page.nextPageToken == "CgwI+ZuQwQYQgJ/a5QI=/next")
        #expect(page.pageInfo == .init(resultPerPage: 3, startIndex: 0, totalResults: 3))
        try #require(page.voidedPurchases.count == 3)

        let first = page.voidedPurchases[0]
        #expect(first.kind == "androidpublisher#voidedPurchase")
        #expect(first.purchaseToken == "kdnfoaijdfnbnnfoaeipdfkj.AO-J1OxA")
        #expect(first.orderId == "GPA.3312-1234-5678-90123")
        #expect(first.purchaseTimeMillis == 1_788_000_000_123)
        #expect(first.voidedTimeMillis == 1_789_000_000_456)
        #expect(first.voidedSource == .user)
        #expect(first.voidedReason == .remorse)
        #expect(first.voidedQuantity == nil)

        let second = page.voidedPurchases[1]
        #expect(second.purchaseTimeMillis == 1_788_000_001_000)
        #expect(second.voidedSource == .google)
        #expect(second.voidedReason == .chargeback)
        #expect(second.voidedReason?.label == "chargeback")

        let third = page.voidedPurchases[2]
        #expect(third.voidedSource == .developer)
        #expect(third.voidedReason?.code == 42)
        #expect(third.voidedReason?.label == "unknown")
        #expect(third.voidedReason?.isKnown == false)
        #expect(third.voidedQuantity == 2)
    }

    @Test func keepsEachRowsJSONAsSent() throws {
        let body = try Fixtures.data("voidedpurchases-list.json")
        let page = try VoidedPurchasesListResponse(json: body)
        for row in page.voidedPurchases {
            let object = try #require(try JSONSerialization.jsonObject(with: row.rawJSON) as? [String: Any])
            #expect(object["purchaseToken"] as? String == row.purchaseToken)
            #expect(
                try JSONDecoder().decode(VoidedPurchase.self, from: row.rawJSON).voidedTimeMillis
                    == row.voidedTimeMillis)
        }
        // The unknown field and the escaped token survive byte for byte.
        let third = String(decoding: page.voidedPurchases[2].rawJSON, as: UTF8.self)
        #expect(third.contains(#""someFutureField": {"nested": [1, 2, {"x": "]"}]}"#))
        #expect(third.hasPrefix("{") && third.hasSuffix("}"))
        let second = String(decoding: page.voidedPurchases[1].rawJSON, as: UTF8.self)
        #expect(second.contains(#"subscription-token-\"quoted\"-\\-{not-a-brace}"#))
    }

    @Test func absentArrayIsAnEmptyLastPage() throws {
        let page = try VoidedPurchasesListResponse(json: Fixtures.data("voidedpurchases-empty.json"))
        #expect(page.voidedPurchases.isEmpty)
        #expect(page.nextPageToken == nil)
        let bare = try VoidedPurchasesListResponse(json: Data("{}".utf8))
        #expect(bare.voidedPurchases.isEmpty && bare.nextPageToken == nil && bare.pageInfo == nil)
        let emptyToken = try VoidedPurchasesListResponse(json: Data(#"{"tokenPagination":{"nextPageToken":""}}"#.utf8))
        #expect(emptyToken.nextPageToken == nil)
    }

    @Test(arguments: [
        (#"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"12x"}]}"#, 0, "voidedTimeMillis"),
        (
            #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1"},{"voidedTimeMillis":"2"}]}"#, 1,
            "purchaseToken"
        ),
        (#"{"voidedPurchases":[{"purchaseToken":7,"voidedTimeMillis":"1"}]}"#, 0, "purchaseToken"),
        (
            #"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1","voidedQuantity":"9999999999"}]}"#, 0,
            "voidedQuantity"
        ),
        (#"{"voidedPurchases":[{"purchaseToken":"t","voidedTimeMillis":"1","orderId":"\ud800"}]}"#, 0, nil),
    ])
    func aRowOfWrongTypesIsSetAsideNamingTheFieldAndTheOthersAreKept(json: String, index: Int, field: String?) throws {
        let page = try VoidedPurchasesListResponse(json: Data(json.utf8))
        let odd = try #require(page.undecodableRows.first)
        #expect(page.undecodableRows.count == 1)
        #expect(odd.index == index && odd.field == field, "\(odd)")
        #expect(page.voidedPurchases.count == index, "the well-formed rows are kept")
        #expect(String(decoding: odd.rawJSON, as: UTF8.self).hasPrefix("{"))
    }

    @Test(arguments: [
        (#"{"voidedPurchases":{"purchaseToken":"t"}}"#, "voidedPurchases"),
        (#"{"tokenPagination":{"nextPageToken":5}}"#, "tokenPagination.nextPageToken"),
    ])
    func wrongTypesOfThePageNameTheField(json: String, field: String) throws {
        let error = try #require(throws: DecodingError.self) { try VoidedPurchasesListResponse(json: Data(json.utf8)) }
        #expect(PlayDeveloperClient.describe(error).field == field)
    }

    @Test func truncatedBodyIsADecodingError() throws {
        let body = try Fixtures.data("voidedpurchases-list.json")
        let error = try #require(throws: DecodingError.self) {
            try VoidedPurchasesListResponse(json: body.prefix(body.count / 2))
        }
        #expect(PlayDeveloperClient.describe(error).message.hasPrefix("malformed or truncated JSON"))
        #expect(PlayDeveloperClient.describe(error).field == nil)
    }

    @Test(
        arguments: [
            (#"0"#, Int32(0), "other"), (#""1""#, 1, "remorse"), (#"2"#, 2, "not_received"), (#""3""#, 3, "defective"),
            (#"4"#, 4, "accidental_purchase"), (#"5"#, 5, "fraud"), (#""6""#, 6, "friendly_fraud"),
            (#"7"#, 7, "chargeback"),
            (#""8""#, 8, "unacknowledged_purchase"), (#"9"#, 9, "unknown"), (#""-1""#, -1, "unknown"),
            (#""FRIENDLY_FRAUD""#, 6, "friendly_fraud"),
        ] as [(String, Int32, String)])
    func reasonsAsNumbersOrStrings(json: String, code: Int32, label: String) throws {
        let reason = try JSONDecoder().decode(VoidedReason.self, from: Data(json.utf8))
        #expect(reason.code == code)
        #expect(reason.label == label)
    }

    @Test func unrecognisedReasonTextIsKeptAsUnknown() throws {
        let reason = try JSONDecoder().decode(VoidedReason.self, from: Data(#""SOMETHING_NEW""#.utf8))
        #expect(reason.code == nil && reason.label == "unknown")
        let source = try JSONDecoder().decode(VoidedSource.self, from: Data(#""7""#.utf8))
        #expect(source.code == 7 && source.label == "unknown")
    }

    @Test func reEncodesGoogleShape() throws {
        let row = VoidedPurchase(
            purchaseToken: "t", orderId: "GPA.1", purchaseTimeMillis: 1, voidedTimeMillis: 2, voidedSource: .user,
            voidedReason: .fraud, voidedQuantity: 3)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(row), as: UTF8.self)
        #expect(
            text
                == #"{"kind":"androidpublisher#voidedPurchase","orderId":"GPA.1","purchaseTimeMillis":"1","purchaseToken":"t","voidedQuantity":3,"voidedReason":5,"voidedSource":0,"voidedTimeMillis":"2"}"#
        )
    }

    @Test func slicerFindsElementsOrReportsShape() throws {
        let json = Data(#" { "a" : [1,{"b":"}"}] , "voidedPurchases" : [ {"x":1} , {"y":[2,"]"]} ] } "#.utf8)
        let ranges = try #require(JSONMemberArraySlicer.elementRanges(of: "voidedPurchases", in: json))
        #expect(ranges.map { String(decoding: json[$0], as: UTF8.self) } == [#"{"x":1}"#, #"{"y":[2,"]"]}"#])
        #expect(JSONMemberArraySlicer.elementRanges(of: "voidedPurchases", in: Data(#"{"a":1}"#.utf8)) == [])
        #expect(JSONMemberArraySlicer.elementRanges(of: "voidedPurchases", in: Data(#"[1]"#.utf8)) == nil)
        // A slice of a larger buffer keeps its own indices.
        let sliced = Data("xx{\"voidedPurchases\":[{}]}".utf8).dropFirst(2)
        let sliceRanges = try #require(JSONMemberArraySlicer.elementRanges(of: "voidedPurchases", in: sliced))
        #expect(sliceRanges.map { String(decoding: sliced[$0], as: UTF8.self) } == ["{}"])
    }

    @Test func spellingHintLooksAtTheFirstValue() {
        #expect(JSONMemberArraySlicer.valueIsString(of: "voidedReason", in: Data(#"{"voidedReason" : "1"}"#.utf8)))
        #expect(!JSONMemberArraySlicer.valueIsString(of: "voidedReason", in: Data(#"{"voidedReason":1}"#.utf8)))
        #expect(!JSONMemberArraySlicer.valueIsString(of: "voidedReason", in: Data(#"{"other":1}"#.utf8)))
        #expect(!JSONMemberArraySlicer.valueIsString(of: "voidedReason", in: Data(#"["voidedReason","x"]"#.utf8)))
    }

    @Test func mixedSpellingsInOnePageAllDecode() throws {
        // The hint says strings (first row); later rows send numbers and still decode.
        let json = #"""
            {"voidedPurchases":[{"purchaseToken":"a","voidedTimeMillis":"1","voidedSource":"2","voidedReason":"5"},
            {"purchaseToken":"b","voidedTimeMillis":2,"voidedSource":1,"voidedReason":6}]}
            """#
        let rows = try VoidedPurchasesListResponse(json: Data(json.utf8)).voidedPurchases
        #expect(rows.map(\.voidedReason) == [.fraud, .friendlyFraud])
        #expect(rows.map(\.voidedSource) == [.google, .developer])
        #expect(rows.map(\.voidedTimeMillis) == [1, 2])
    }
}
