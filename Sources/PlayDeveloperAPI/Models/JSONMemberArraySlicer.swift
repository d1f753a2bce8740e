import Foundation

// Finds the byte ranges of the elements of one array member of a top-level JSON object, without building any
// values: one linear pass over bytes that JSONDecoder has already accepted. Lets each voided-purchase row keep its
// JSON exactly as sent, at the cost of a copy (a small fraction of decoding time: see `scripts/bench`).
enum JSONMemberArraySlicer {
    /// Ranges (as `Data` indices) of the elements of the array at top-level key `key`, `[]` when the key is absent,
    /// or `nil` when the text is not shaped as expected.
    static func elementRanges(of key: String, in data: Data) -> [Range<Data.Index>]? {
        let keyBytes = Array(key.utf8)
        let base = data.startIndex
        let result: [Range<Int>]? = data.withUnsafeBytes { raw in
            var scanner = Scanner(bytes: raw.bindMemory(to: UInt8.self))
            return scanner.elementRanges(of: keyBytes)
        }
        return result?.map { (base + $0.lowerBound)..<(base + $0.upperBound) }
    }

    /// Whether the first member named `key` anywhere in the text has a string value (a decoding hint only).
    static func valueIsString(of key: String, in data: Data) -> Bool {
        guard let range = data.firstRange(of: Data("\"\(key)\"".utf8)) else { return false }
        var index = range.upperBound
        var sawColon = false
        while index < data.endIndex {
            switch data[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): break
            case UInt8(ascii: ":") where !sawColon: sawColon = true
            case UInt8(ascii: "\""): return sawColon
            default: return false
            }
            index += 1
        }
        return false
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func elementRanges(of key: [UInt8]) -> [Range<Int>]? {
            skipWhitespace()
            guard consume(UInt8(ascii: "{")) else { return nil }
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return [] }
            while true {
                skipWhitespace()
                let keyStart = index + 1
                guard skipString() else { return nil }
                let isTarget = bytes[keyStart..<(index - 1)].elementsEqual(key)
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                if isTarget {
                    return arrayElements()
                }
                guard skipValue() else { return nil }
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "}")) ? [] : nil
            }
        }

        private mutating func arrayElements() -> [Range<Int>]? {
            guard consume(UInt8(ascii: "[")) else { return nil }
            var ranges: [Range<Int>] = []
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return ranges }
            while true {
                skipWhitespace()
                let start = index
                guard skipValue() else { return nil }
                ranges.append(start..<index)
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "]")) ? ranges : nil
            }
        }

        private mutating func consume(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
                default: return
                }
            }
        }

        // At a quote: moves past the closing quote.
        private mutating func skipString() -> Bool {
            guard consume(UInt8(ascii: "\"")) else { return false }
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                case UInt8(ascii: "\\"):
                    index += 2
                default:
                    index += 1
                }
            }
            return false
        }

        private mutating func skipValue() -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard skipString() else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            index += 1
                            return true
                        }
                    default:
                        break
                    }
                    index += 1
                }
                return false
            default:
                // A number, true, false or null: runs to the next delimiter.
                let start = index
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: " "),
                        UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                        return index > start
                    default:
                        index += 1
                    }
                }
                return index > start
            }
        }
    }
}
