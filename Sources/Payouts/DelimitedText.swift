import Foundation

/// Splits delimited text into records: RFC 4180 CSV (quoted fields, doubled quotes, line breaks inside quotes) or
/// Apple's tab-separated rows (no quoting). CRLF and LF both end a record; a UTF-8 byte order mark is skipped.
struct DelimitedText {
    /// One record and the line it starts on (1-based).
    struct Record {
        var line: Int
        var fields: [String]
    }

    let bytes: [UInt8]
    let separator: UInt8
    let quoting: Bool
    let file: String

    /// Prepares to read `data`.
    init(_ data: Data, separator: UInt8, quoting: Bool, file: String) {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
        self.separator = separator
        self.quoting = quoting
        self.file = file
    }

    /// Calls `body` with every record, in order (an empty line is a record with one empty field).
    /// - Throws: ``PayoutError`` (`.badFile`) for text that is not UTF-8 or a quote left open; whatever `body`
    ///   throws.
    func forEachRecord(_ body: (Record) throws -> Void) throws {
        var index = 0
        var line = 1
        let count = bytes.count
        while index < count {
            let start = line
            var fields: [String] = []
            var field: [UInt8] = []
            var quoted = false
            var ended = false
            while index < count && !ended {
                let byte = bytes[index]
                if quoted {
                    if byte == 0x22 {
                        if index + 1 < count && bytes[index + 1] == 0x22 {
                            field.append(0x22)
                            index += 1
                        } else {
                            quoted = false
                        }
                    } else {
                        if byte == 0x0A { line += 1 }
                        field.append(byte)
                    }
                } else if byte == separator {
                    fields.append(try text(field, line: line, column: fields.count + 1))
                    field.removeAll(keepingCapacity: true)
                } else if byte == 0x0A {
                    ended = true
                } else if byte == 0x0D && index + 1 < count && bytes[index + 1] == 0x0A {
                    index += 1
                    ended = true
                } else if byte == 0x22 && quoting && field.isEmpty {
                    quoted = true
                } else {
                    field.append(byte)
                }
                index += 1
            }
            if quoted {
                throw PayoutError(.badFile, "a quoted field is never closed", file: file, line: start)
            }
            fields.append(try text(field, line: line, column: fields.count + 1))
            try body(Record(line: start, fields: fields))
            line += 1
        }
    }

    private func text(_ field: [UInt8], line: Int, column: Int) throws -> String {
        guard let value = String(validating: field, as: UTF8.self) else {
            throw PayoutError(.badFile, "the field is not UTF-8 text", file: file, line: line, column: column)
        }
        return value
    }
}
