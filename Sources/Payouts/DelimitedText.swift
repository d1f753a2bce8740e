import Foundation

/// Splits delimited text into records: RFC 4180 CSV (quoted fields, doubled quotes, line breaks inside quotes) or
/// Apple's tab-separated rows (no quoting). CRLF and LF both end a record; a UTF-8 byte order mark is skipped.
///
/// Reads the bytes in place: a record is the places of its fields in the bytes, and a field becomes a `String` only
/// when it is read (a million-row report is 21 million fields, and a parser reads half of them). A field that cannot
/// be read in place (non-ASCII, checked as UTF-8 at once; or quoted with doubled quotes) is copied when it is found.
struct DelimitedText {
    /// One record and the line it starts on (1-based). Valid only inside the `forEachRecord` call that gives it.
    struct Record {
        var line: Int
        fileprivate let bytes: UnsafeBufferPointer<UInt8>
        fileprivate let spans: [Span]
        fileprivate let texts: [String]

        /// How many fields the record has.
        var count: Int { spans.count }

        /// The field at `index` (0-based).
        subscript(index: Int) -> String {
            let span = spans[index]
            if span.text >= 0 { return texts[span.text] }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[span.start..<span.end]), as: UTF8.self)
        }

        /// The field at `index` without leading and trailing ASCII spaces and tabs (read in place: the common field
        /// with none costs two byte reads).
        func trimmed(_ index: Int) -> String {
            let span = spans[index]
            if span.text >= 0 { return ReportFields.trimmed(texts[span.text]) }
            var start = span.start
            var end = span.end
            while start < end && (bytes[start] == 0x20 || bytes[start] == 0x09) { start += 1 }
            while end > start && (bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09) { end -= 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }

        /// Every field, in order.
        var fields: [String] { (0..<count).map { self[$0] } }

        /// Whether the record is an empty line (one empty field).
        var isBlankLine: Bool { spans.count == 1 && spans[0].text < 0 && spans[0].start == spans[0].end }
    }

    /// Where a field is: ASCII bytes in place (`text` < 0), or a copy in the record's `texts`.
    fileprivate struct Span {
        var start: Int
        var end: Int
        var text: Int
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
            while reader.index < bytes.count {
                let start = reader.line
                reader.spans.removeAll(keepingCapacity: true)
                reader.texts.removeAll(keepingCapacity: true)
                try reader.readRecord()
                try body(Record(line: start, bytes: bytes, spans: reader.spans, texts: reader.texts))
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
        var spans: [Span] = []
        var texts: [String] = []

        /// Reads one record's fields into `spans`, leaving `index` after its line end.
        mutating func readRecord() throws {
            let count = bytes.count
            while true {
                spans.append(try readField(column: spans.count + 1))
                guard index < count else { return }
                let byte = bytes[index]
                index += 1
                if byte == separator { continue }
                if byte == 0x0D { index += 1 }  // CRLF: readField stopped only at a CR followed by LF
                return
            }
        }

        /// Reads one field, leaving `index` on the separator or line end that follows it (or at the end).
        mutating func readField(column: Int) throws -> Span {
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
                if byte == 0 { throw nul(column: column) }
                high |= byte
                index += 1
            }
            if high < 0x80 { return Span(start: start, end: index, text: -1) }
            return try copied(UnsafeBufferPointer(rebasing: bytes[start..<index]), column: column)
        }

        /// A NUL byte: no text column holds one, and a report that has one is damaged.
        func nul(column: Int) -> PayoutError {
            PayoutError(.badFile, "the field holds a NUL byte", file: file, line: line, column: column)
        }

        /// A quoted field: doubled quotes stand for one, line breaks are part of the value. Bytes after the closing
        /// quote up to the separator are kept, as a lenient reader of Excel-made files does.
        mutating func readQuoted(column: Int) throws -> Span {
            let count = bytes.count
            let opened = line
            index += 1
            var start = index
            var unquoted: [UInt8]?
            var high: UInt8 = 0
            while true {
                guard index < count else {
                    throw PayoutError(.badFile, "a quoted field is never closed", file: file, line: opened)
                }
                let byte = bytes[index]
                if byte == 0x0A { line += 1 }
                if byte != 0x22 {
                    if byte == 0 { throw nul(column: column) }
                    high |= byte
                    index += 1
                    continue
                }
                if index + 1 < count && bytes[index + 1] == 0x22 {
                    unquoted = (unquoted ?? []) + bytes[start...index]
                    index += 2
                    start = index
                    continue
                }
                break
            }
            let end = index
            index += 1
            if unquoted == nil && high < 0x80 && atFieldEnd() { return Span(start: start, end: end, text: -1) }
            var value = (unquoted ?? []) + bytes[start..<end]
            while index < count {
                let byte = bytes[index]
                if byte == separator || byte == 0x0A { break }
                if byte == 0x0D && index + 1 < count && bytes[index + 1] == 0x0A { break }
                value.append(byte)
                index += 1
            }
            return try value.withUnsafeBufferPointer { try copied($0, column: column) }
        }

        /// Whether `index` is at a separator, a line end or the end of the bytes.
        private func atFieldEnd() -> Bool {
            guard index < bytes.count else { return true }
            let byte = bytes[index]
            if byte == separator || byte == 0x0A { return true }
            return byte == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A
        }

        /// A field that cannot be read in place, checked as UTF-8 and kept in `texts`.
        private mutating func copied(_ field: UnsafeBufferPointer<UInt8>, column: Int) throws -> Span {
            guard let value = String(validating: field, as: UTF8.self) else {
                throw PayoutError(.badFile, "the field is not UTF-8 text", file: file, line: line, column: column)
            }
            texts.append(value)
            return Span(start: 0, end: 0, text: texts.count - 1)
        }
    }
}
