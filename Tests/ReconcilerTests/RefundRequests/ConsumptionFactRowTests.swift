import Foundation
import Reconciler
import Testing

/// The consumption CSV's lines: each column checked, bad lines named by their number.
@Suite("ConsumptionFactRow")
struct ConsumptionFactRowTests {
    let positions = Array(0..<7)

    func row(_ line: String) throws(ConsumptionImportError) -> ConsumptionFactRow {
        try ConsumptionFactRow(
            fields: line.split(separator: ",", omittingEmptySubsequences: false).map(String.init),
            positions: positions, line: 7)
    }

    @Test func aGoodLineReadsEveryColumn() throws {
        let parsed = try row("Apple, 2000000123 ,true,undelivered_wrong_item,12.345,false,2026-07-01T10:00:00+02:00")
        #expect(parsed.platform == .apple)
        #expect(parsed.purchaseId == "2000000123")
        #expect(parsed.facts.customerConsented)
        #expect(parsed.facts.deliveryStatus == .undeliveredWrongItem)
        #expect(parsed.facts.consumptionMilli == 12_345)
        #expect(!parsed.facts.sampleContentProvided)
        #expect(parsed.facts.asOf == Date(timeIntervalSince1970: 1_782_892_800))
        #expect(try row("google,GPA.1,0,delivered,,1,2026-07-01T08:00:00Z").facts.consumptionMilli == nil)
        #expect(try row("google,GPA.1,0,delivered,100,1,2026-07-01T08:00:00Z").facts.consumptionMilli == 100_000)
        #expect(try row("google,GPA.1,0,delivered,0.5,1,2026-07-01T08:00:00Z").facts.consumptionMilli == 500)
    }

    @Test(arguments: [
        ("amazon,1,true,delivered,1,false,2026-07-01T08:00:00Z", "line 7: platform \"amazon\" is not apple or google"),
        ("apple,,true,delivered,1,false,2026-07-01T08:00:00Z", "line 7: purchase_id is empty"),
        (
            "apple,1,yes,delivered,1,false,2026-07-01T08:00:00Z",
            "line 7: customer_consented \"yes\" is not true or false"
        ),
        ("apple,1,true,lost,1,false,2026-07-01T08:00:00Z", "line 7: delivery_status \"lost\" is not one of"),
        ("apple,1,true,delivered,100.001,false,2026-07-01T08:00:00Z", "line 7: consumption_percent \"100.001\""),
        ("apple,1,true,delivered,1.2345,false,2026-07-01T08:00:00Z", "line 7: consumption_percent \"1.2345\""),
        ("apple,1,true,delivered,-1,false,2026-07-01T08:00:00Z", "line 7: consumption_percent \"-1\""),
        ("apple,1,true,delivered,-0.5,false,2026-07-01T08:00:00Z", "line 7: consumption_percent \"-0.5\""),
        ("apple,1,true,delivered,+5,false,2026-07-01T08:00:00Z", "line 7: consumption_percent \"+5\""),
        ("apple,1,true,delivered,1,false,2026-02-31T08:00:00Z", "line 7: as_of \"2026-02-31T08:00:00Z\""),
        ("apple,1,true,delivered,1,no,2026-07-01T08:00:00Z", "line 7: sample_content_provided \"no\""),
        ("apple,1,true,delivered,1,false,2026-07-01T08:00:00", "line 7: as_of \"2026-07-01T08:00:00\""),
        ("apple,1,true,delivered,1,false", "line 7: expected 7 fields, found 6"),
    ])
    func aBadLineIsNamedWithItsNumberAndReason(line: String, message: String) {
        #expect(throws: ConsumptionImportError.self) { try row(line) }
        do {
            _ = try row(line)
        } catch {
            #expect(error.description.hasPrefix(message), "\(error)")
        }
    }

    @Test func theHeaderMayComeInAnyOrderButNotShort() throws {
        let header = [
            "as_of", "platform", "purchase_id", "customer_consented", "delivery_status", "consumption_percent",
            "sample_content_provided",
        ]
        #expect(try ConsumptionFactRow.positions(header) == [1, 2, 3, 4, 5, 6, 0])
        #expect(throws: ConsumptionImportError(line: 1, reason: "missing column as_of")) {
            try ConsumptionFactRow.positions(Array(header.dropFirst()))
        }
        #expect(throws: ConsumptionImportError(line: 1, reason: "unknown column \"user\"")) {
            try ConsumptionFactRow.positions(header + ["user"])
        }
    }
}
