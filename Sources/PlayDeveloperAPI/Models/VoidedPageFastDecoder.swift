import Foundation

// Decodes a voided-purchases page of the usual shape in one pass over its bytes, cheaper than JSONDecoder (which was
// most of storerecon's own time in a backfill). It accepts only what it is sure of: known
// keys, each once; strings without escapes; integers as plain digits, quoted or not; no nulls. For anything else
// it returns nil and the caller decodes with JSONDecoder, so values and errors stay exactly JSONDecoder's.
enum VoidedPageFastDecoder {
    static func decode(_ data: Data) -> VoidedPurchasesListResponse? {
        data.withUnsafeBytes { raw -> VoidedPurchasesListResponse? in
            var reader = FastJSONReader(bytes: raw.bindMemory(to: UInt8.self))
            var rowRanges: [Range<Int>] = []
            guard var page = reader.page(rowRanges: &rowRanges), reader.atEnd() else { return nil }
            let base = data.startIndex
            for index in page.voidedPurchases.indices {
                let range = rowRanges[index]
                page.voidedPurchases[index].rawJSON = data[(base + range.lowerBound)..<(base + range.upperBound)]
            }
            return page
        }
    }
}

extension FastJSONReader {
    fileprivate mutating func page(rowRanges: inout [Range<Int>]) -> VoidedPurchasesListResponse? {
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
                guard let rows = parser.rows(ranges: &rowRanges) else { return false }
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

    private mutating func rows(ranges: inout [Range<Int>]) -> [VoidedPurchase]? {
        var rows: [VoidedPurchase] = []
        rows.reserveCapacity(1000)
        ranges.reserveCapacity(1000)
        let parsed = array { reader in
            let start = reader.index
            guard let row = reader.row() else { return false }
            rows.append(row)
            ranges.append(start..<reader.index)
            return true
        }
        return parsed ? rows : nil
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

    /// A Google code: a number, or a string holding a number or a label (see `PlayEnumCode`).
    private mutating func code<Code: PlayEnumCode>() -> Code? {
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "\"") { return string().map { Code(text: $0) } }
        return integer().flatMap { Int32(exactly: $0) }.map { Code(code: $0, label: Code.label(for: $0)) }
    }
}
