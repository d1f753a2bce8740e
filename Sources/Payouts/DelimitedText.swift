import Foundation

/// Splits delimited text into records: RFC 4180 CSV (quoted fields, doubled quotes, line breaks inside quotes) or
/// Apple's tab-separated rows (no quoting). CRLF and LF both end a record; a UTF-8 byte order mark is skipped.
///
/// Reads the bytes in place: a field becomes a `String` straight from its bytes (a million-row report is 20 million
/// fields), and only a quoted field with doubled quotes is copied to drop them.
struct DelimitedText {
    /// One record and the line it starts on (1-based).
    struct Record {
        var line: Int
        var fields: [String]
    }

    let data: Data
    let separator: UInt8
    let quoting: Bool
    let file: String

    /// Prepares to read `data`.
    init(_ data: Data, separator: UInt8, quoting: Bool, file: String) {
        self.data = data
        self.separator = separator
        self.quoting = quoting
        self.file = file
    }

    /// Calls `body` with every record, in order (an empty line is a record with one empty field).
    /// - Throws: ``PayoutError`` (`.badFile`) for text that is not UTF-8 or a quote left open; whatever `body`
    ///   throws.
    func forEachRecord(_ body: (Record) throws -> Void) throws {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var reader = Reader(bytes: bytes, separator: separator, quoting: quoting, file: file)
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
            var fields: [String] = []
            while reader.index < bytes.count {
                let start = reader.line
                fields.removeAll(keepingCapacity: true)
                try reader.readRecord(into: &fields)
                try body(Record(line: start, fields: fields))
                reader.line += 1
            }
        }
    }

    /// The cursor over the bytes.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let separator: UInt8
        let quoting: Bool
        let file: String
        var index = 0
        var line = 1

        /// Reads one record's fields, leaving `index` after its line end.
        mutating func readRecord(into fields: inout [String]) throws {
            let count = bytes.count
            while true {
                let value = try readField(column: fields.count + 1)
                fields.append(value)
                guard index < count else { return }
                let byte = bytes[index]
                index += 1
                if byte == separator { continue }
                if byte == 0x0D { index += 1 }  // CRLF: readField stopped only at a CR followed by LF
                return
            }
        }

        /// Reads one field, leaving `index` on the separator or line end that follows it (or at the end).
        mutating func readField(column: Int) throws -> String {
            let count = bytes.count
            let start = index
            if quoting && index < count && bytes[index] == 0x22 {
                return try readQuoted(column: column)
            }
            var high: UInt8 = 0
            while index < count {
                let byte = bytes[index]
                if byte == separator || byte == 0x0A { break }
                if byte == 0x0D && index + 1 < count && bytes[index + 1] == 0x0A { break }
                high |= byte
                index += 1
            }
            return try text(UnsafeBufferPointer(rebasing: bytes[start..<index]), column: column, ascii: high < 0x80)
        }

        /// A quoted field: doubled quotes stand for one, line breaks are part of the value. Bytes after the closing
        /// quote up to the separator are kept, as a lenient reader of Excel-made files does.
        mutating func readQuoted(column: Int) throws -> String {
            let count = bytes.count
            let opened = line
            index += 1
            var start = index
            var copied: [UInt8]?
            while true {
                guard index < count else {
                    throw PayoutError(.badFile, "a quoted field is never closed", file: file, line: opened)
                }
                let byte = bytes[index]
                if byte == 0x0A { line += 1 }
                if byte != 0x22 {
                    index += 1
                    continue
                }
                if index + 1 < count && bytes[index + 1] == 0x22 {
                    copied = (copied ?? []) + bytes[start...index]
                    index += 2
                    start = index
                    continue
                }
                break
            }
            var value = (copied ?? []) + bytes[start..<index]
            index += 1
            while index < count {
                let byte = bytes[index]
                if byte == separator || byte == 0x0A { break }
                if byte == 0x0D && index + 1 < count && bytes[index + 1] == 0x0A { break }
                value.append(byte)
                index += 1
            }
            return try value.withUnsafeBufferPointer { try text($0, column: column, ascii: false) }
        }

        /// The field as a string. ASCII needs no validation, and `String(validating:)` is not specialized here: it
        /// would look its generic metadata up for each of a report's twenty million fields.
        private func text(_ field: UnsafeBufferPointer<UInt8>, column: Int, ascii: Bool) throws -> String {
            if ascii { return String(decoding: field, as: UTF8.self) }
            guard let value = String(validating: field, as: UTF8.self) else {
                throw PayoutError(.badFile, "the field is not UTF-8 text", file: file, line: line, column: column)
            }
            return value
        }
    }
}
