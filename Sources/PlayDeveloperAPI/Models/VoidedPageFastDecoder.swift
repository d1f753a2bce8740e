import Foundation

// Decodes a voided-purchases page of the usual shape in one pass over its bytes, about three times cheaper than
// JSONDecoder (which was most of storerecon's own time in a backfill). It accepts only what it is sure of: known
// keys, each once; strings without escapes; integers as plain digits, quoted or not; no nulls. For anything else
// it returns nil and the caller decodes with JSONDecoder, so values and errors stay exactly JSONDecoder's.
enum VoidedPageFastDecoder {
    static func decode(_ data: Data) -> VoidedPurchasesListResponse? {
        data.withUnsafeBytes { raw -> VoidedPurchasesListResponse? in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            guard var page = parser.page(), parser.atEnd() else { return nil }
            let base = data.startIndex
            for index in page.voidedPurchases.indices {
                let range = parser.rowRanges[index]
                page.voidedPurchases[index].rawJSON = data[(base + range.lowerBound)..<(base + range.upperBound)]
            }
            return page
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var rowRanges: [Range<Int>] = []

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func atEnd() -> Bool {
            skipWhitespace()
            return index == bytes.count
        }

        mutating func page() -> VoidedPurchasesListResponse? {
            var page = VoidedPurchasesListResponse(voidedPurchases: [])
            var seen = Set<String>()
            let parsed = object { key, parser in
                guard seen.insert(key).inserted else { return false }
                switch key {
                case "tokenPagination":
                    guard let value = parser.tokenPagination() else { return false }
                    page.tokenPagination = value
                case "pageInfo":
                    guard let value = parser.pageInfo() else { return false }
                    page.pageInfo = value
                case "voidedPurchases":
                    guard let rows = parser.rows() else { return false }
                    page.voidedPurchases = rows
                default:
                    return false
                }
                return true
            }
            return parsed ? page : nil
        }

        private mutating func tokenPagination() -> VoidedPurchasesListResponse.TokenPagination? {
            var value = VoidedPurchasesListResponse.TokenPagination()
            var seen = Set<String>()
            let parsed = object { key, parser in
                guard seen.insert(key).inserted, let text = parser.string() else { return false }
                switch key {
                case "nextPageToken": value.nextPageToken = text
                case "previousPageToken": value.previousPageToken = text
                default: return false
                }
                return true
            }
            return parsed ? value : nil
        }

        private mutating func pageInfo() -> VoidedPurchasesListResponse.PageInfo? {
            var value = VoidedPurchasesListResponse.PageInfo()
            var seen = Set<String>()
            let parsed = object { key, parser in
                guard seen.insert(key).inserted, let number = parser.integer().flatMap({ Int32(exactly: $0) })
                else { return false }
                switch key {
                case "resultPerPage": value.resultPerPage = number
                case "startIndex": value.startIndex = number
                case "totalResults": value.totalResults = number
                default: return false
                }
                return true
            }
            return parsed ? value : nil
        }

        private mutating func rows() -> [VoidedPurchase]? {
            skipWhitespace()
            guard consume(UInt8(ascii: "[")) else { return nil }
            var rows: [VoidedPurchase] = []
            rows.reserveCapacity(1000)
            rowRanges.reserveCapacity(1000)
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return rows }
            while true {
                skipWhitespace()
                let start = index
                guard let row = row() else { return nil }
                rows.append(row)
                rowRanges.append(start..<index)
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "]")) ? rows : nil
            }
        }

        private mutating func row() -> VoidedPurchase? {
            var kind: String?
            var purchaseToken: String?
            var orderId: String?
            var purchaseTime: Int64?
            var voidedTime: Int64?
            var source: VoidedSource?
            var reason: VoidedReason?
            var quantity: Int32?
            var seen: UInt16 = 0
            let parsed = object { key, parser in
                let bit: UInt16
                switch key {
                case "kind":
                    bit = 1
                    kind = parser.string()
                    if kind == nil { return false }
                case "purchaseToken":
                    bit = 2
                    purchaseToken = parser.string()
                    if purchaseToken == nil { return false }
                case "orderId":
                    bit = 4
                    orderId = parser.string()
                    if orderId == nil { return false }
                case "purchaseTimeMillis":
                    bit = 8
                    purchaseTime = parser.flexibleInteger()
                    if purchaseTime == nil { return false }
                case "voidedTimeMillis":
                    bit = 16
                    voidedTime = parser.flexibleInteger()
                    if voidedTime == nil { return false }
                case "voidedSource":
                    bit = 32
                    source = parser.code()
                    if source == nil { return false }
                case "voidedReason":
                    bit = 64
                    reason = parser.code()
                    if reason == nil { return false }
                case "voidedQuantity":
                    bit = 128
                    quantity = parser.flexibleInteger().flatMap { Int32(exactly: $0) }
                    if quantity == nil { return false }
                default:
                    return false
                }
                guard seen & bit == 0 else { return false }
                seen |= bit
                return true
            }
            guard parsed, let purchaseToken, let voidedTime else { return nil }
            return VoidedPurchase(
                kind: kind, purchaseToken: purchaseToken, orderId: orderId, purchaseTimeMillis: purchaseTime,
                voidedTimeMillis: voidedTime, voidedSource: source, voidedReason: reason, voidedQuantity: quantity)
        }

        /// An object whose members `member` reads (it returns false to give up).
        private mutating func object(_ member: (String, inout Parser) -> Bool) -> Bool {
            skipWhitespace()
            guard consume(UInt8(ascii: "{")) else { return false }
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return true }
            while true {
                skipWhitespace()
                guard let key = string() else { return false }
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return false }
                skipWhitespace()
                guard member(key, &self) else { return false }
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "}"))
            }
        }

        /// A string without escapes or control characters, as valid UTF-8.
        private mutating func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var end = start
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\"") { break }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                end += 1
            }
            guard end < bytes.count else { return nil }
            index = end + 1
            return String(validating: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }

        /// An unquoted JSON integer (`-`? digits, no leading zero), followed by a delimiter.
        private mutating func integer() -> Int64? {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digits = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            let count = index - digits
            guard count > 0, count == 1 || bytes[digits] != UInt8(ascii: "0") else { return nil }
            if index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: " "), UInt8(ascii: "\n"),
                    UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                    break
                default:
                    return nil
                }
            }
            return Int64(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
        }

        /// An int64 sent as a decimal string (Google's way) or a number, read as `decodeFlexibleInt64` reads it.
        private mutating func flexibleInteger() -> Int64? {
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "\"") { return string().flatMap { Int64($0) } }
            return integer()
        }

        /// A Google code: a number, or a string holding a number or a label (see `PlayEnumCode`).
        private mutating func code<Code: PlayEnumCode>() -> Code? {
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "\"") { return string().map { Code(text: $0) } }
            return integer().flatMap { Int32(exactly: $0) }.map { Code(code: $0, label: Code.label(for: $0)) }
        }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
                default: return
                }
            }
        }

        private mutating func consume(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
    }
}
