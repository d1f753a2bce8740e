import Foundation

/// Reads RFC 4180 CSV record by record from a file, in fixed-size chunks, so memory stays flat in the file's size.
///
/// Quoted fields may hold commas, doubled quotes and line breaks; records end with CRLF or LF. Each record comes
/// with the line number it starts on, for error messages.
public struct CSVReader: ~Copyable {
    /// One record: its fields and the 1-based line it starts on.
    public struct Record: Sendable, Equatable {
        /// The fields, unquoted.
        public var fields: [String]
        /// The 1-based line number of the record's first line.
        public var line: Int
    }

    /// A malformed record.
    public struct Malformed: Error, Sendable, Equatable {
        /// The 1-based line the record starts on.
        public var line: Int
        /// What is wrong.
        public var reason: String
    }

    private let source: (inout [UInt8]) throws -> Bool
    private var buffer: [UInt8] = []
    private var position = 0
    private var exhausted = false
    private var line = 1
    /// Longest field accepted; a longer one is malformed (a runaway quote must not eat memory).
    private let maxFieldBytes: Int

    /// Reads from a file handle.
    public init(fileHandle: FileHandle, maxFieldBytes: Int = 1 << 20) {
        self.maxFieldBytes = maxFieldBytes
        source = { buffer in
            guard let chunk = try fileHandle.read(upToCount: 1 << 20), !chunk.isEmpty else { return false }
            buffer.append(contentsOf: chunk)
            return true
        }
    }

    /// Reads from bytes in memory (tests, fuzzing).
    public init(bytes: [UInt8], maxFieldBytes: Int = 1 << 20) {
        self.maxFieldBytes = maxFieldBytes
        nonisolated(unsafe) var pending: [UInt8]? = bytes
        source = { buffer in
            guard let bytes = pending else { return false }
            pending = nil
            buffer.append(contentsOf: bytes)
            return true
        }
    }

    private mutating func nextByte() throws -> UInt8? {
        // A loop, not an `if`: a source may deliver an empty chunk (an empty in-memory input does).
        while position == buffer.count {
            if exhausted { return nil }
            buffer.removeAll(keepingCapacity: true)
            position = 0
            if try !source(&buffer) {
                exhausted = true
                return nil
            }
        }
        defer { position += 1 }
        return buffer[position]
    }

    private mutating func peekByte() throws -> UInt8? {
        guard let byte = try nextByte() else { return nil }
        position -= 1
        return byte
    }

    /// The next record, or `nil` at the end of the input.
    /// - Throws: ``Malformed`` for an unterminated quote, a stray quote, a field that is too long or bad UTF-8.
    ///   After a malformed record, reading continues at the next line.
    public mutating func next() throws -> Record? {
        guard try peekByte() != nil else { return nil }
        let startLine = line
        var record = PartialRecord()
        while true {
            guard let byte = try nextByte() else {
                if record.quoted { record.fail("a quoted field is not closed before the end of the file") }
                record.finishField()
                break
            }
            if record.quoted {
                try readQuoted(byte, into: &record)
            } else if byte == 10 || byte == 13 {
                if byte == 13, try peekByte() == 10 { _ = try nextByte() }
                line += 1
                record.finishField()
                break
            } else {
                record.readUnquoted(byte)
            }
            record.limit(maxFieldBytes)
        }
        if let malformed = record.malformed { throw Malformed(line: startLine, reason: malformed) }
        return Record(fields: record.fields, line: startLine)
    }

    /// A byte inside a quoted field: `""` is a quote, a lone `"` closes the field.
    private mutating func readQuoted(_ byte: UInt8, into record: inout PartialRecord) throws {
        if byte == 34 {
            if try peekByte() == 34 {
                _ = try nextByte()
                record.field.append(34)
            } else {
                record.quoted = false
                record.afterQuote = true
            }
        } else {
            if byte == 10 { line += 1 }
            record.field.append(byte)
        }
    }

    /// The record being read: its finished fields, the field in progress, and the first problem found.
    private struct PartialRecord {
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var afterQuote = false
        var malformed: String?

        /// Keeps the first problem of the record.
        mutating func fail(_ reason: String) { malformed = malformed ?? reason }

        mutating func finishField() {
            if malformed == nil, let text = String(validating: field, as: UTF8.self) {
                fields.append(text)
            } else if malformed == nil {
                malformed = "field \(fields.count + 1) is not valid UTF-8"
            }
            field.removeAll(keepingCapacity: true)
        }

        /// A byte outside quotes, other than a line break.
        mutating func readUnquoted(_ byte: UInt8) {
            if byte == 44 {
                finishField()
                afterQuote = false
            } else if byte == 34 {
                if field.isEmpty && !afterQuote {
                    quoted = true
                } else {
                    fail("a quote inside an unquoted field of column \(fields.count + 1)")
                }
            } else {
                if afterQuote { fail("text after the closing quote of column \(fields.count + 1)") }
                field.append(byte)
            }
        }

        mutating func limit(_ maxFieldBytes: Int) {
            guard field.count > maxFieldBytes else { return }
            fail("field \(fields.count + 1) is longer than \(maxFieldBytes) bytes")
            field.removeAll(keepingCapacity: true)
            // Resynchronise at the next line break: the quote is almost certainly runaway.
            quoted = false
        }
    }
}
