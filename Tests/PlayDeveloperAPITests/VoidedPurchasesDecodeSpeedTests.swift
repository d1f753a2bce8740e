import Foundation
import PlayDeveloperAPI
import Testing

/// A quick decode-speed reading for a full page (1000 rows), printed, never asserted on time.
/// Run with `PLAY_DECODE_BENCH=1 swift test --filter VoidedPurchasesDecodeSpeedTests` (add `-c release` for real numbers).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["PLAY_DECODE_BENCH"] == "1"))
struct VoidedPurchasesDecodeSpeedTests {
    static func page(rows: Int, codesAsStrings: Bool = false) -> Data {
        var text = #"{"pageInfo":{"totalResults":1000,"resultPerPage":1000,"startIndex":0},"#
        text += #""tokenPagination":{"nextPageToken":"CgwI+ZuQwQYQgJ/a5QI="},"voidedPurchases":["#
        for index in 0..<rows {
            if index > 0 { text += "," }
            text += #"{"kind":"androidpublisher#voidedPurchase","#
            text +=
                #""purchaseToken":"pjmgobgkfejkldfmeocbhkfn.AO-J1OzT3xYd8_\#(index)qW9VbL5xk2N7uH4rJ0sPcGfTmD1yAaZeEwQvRnBhIoUjKlMiXyCt6pFg","#
            text += #""purchaseTimeMillis":"\#(1_788_000_000_000 + index * 1000)","#
            text += #""voidedTimeMillis":"\#(1_789_000_000_000 + index * 1000)","#
            text += #""orderId":"GPA.3312-\#(1000 + index % 9000)-5678-\#(10000 + index)..\#(index % 5)","#
            let quote = codesAsStrings ? "\"" : ""
            text += #""voidedSource":\#(quote)\#(index % 3)\#(quote),"voidedReason":\#(quote)\#(index % 9)\#(quote)"#
            if index % 10 == 0 { text += #","voidedQuantity":1"# }
            text += "}"
        }
        return Data((text + "]}").utf8)
    }

    func measure(_ label: String, rows: Int, repeats: Int, _ body: () throws -> Int) rethrows {
        var best = Double.infinity
        var count = 0
        for _ in 0..<repeats {
            let start = ContinuousClock.now
            count = try body()
            let elapsed = start.duration(to: .now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            best = min(best, seconds)
        }
        let perSecond = Int(Double(rows) / best)
        print("decode speed: \(label): \(rows) rows in \(String(format: "%.2f", best * 1000)) ms = \(perSecond) rows/s")
        #expect(count == rows)
    }

    @Test(arguments: [false, true])
    func fullPage(codesAsStrings: Bool) throws {
        let body = Self.page(rows: 1000, codesAsStrings: codesAsStrings)
        print("decode speed: voidedSource/voidedReason sent as \(codesAsStrings ? "strings" : "numbers")")
        print("decode speed: page of 1000 rows is \(body.count) bytes")
        try measure("JSONDecoder only", rows: 1000, repeats: 20) {
            try JSONDecoder().decode(VoidedPurchasesListResponse.self, from: body).voidedPurchases.count
        }
        try measure("decode + raw row bytes (init(json:))", rows: 1000, repeats: 20) {
            let page = try VoidedPurchasesListResponse(json: body)
            #expect(page.voidedPurchases[999].rawJSON.count > 100)
            return page.voidedPurchases.count
        }
        try measure("decode + canonical re-encode per row", rows: 1000, repeats: 20) {
            let page = try JSONDecoder().decode(VoidedPurchasesListResponse.self, from: body)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            var bytes = 0
            for row in page.voidedPurchases { bytes += try encoder.encode(row).count }
            #expect(bytes > 100_000)
            return page.voidedPurchases.count
        }
    }
}
