import CLibPQ

extension PostgresConnection {
    /// Bulk-loads rows with `COPY ... FROM STDIN` in text format.
    /// - Parameters:
    ///   - sql: a `COPY table (columns) FROM STDIN` statement.
    ///   - body: writes the rows through the `CopyWriter`.
    /// - Returns: the number of rows the server loaded.
    @discardableResult
    public func copyIn(_ sql: String, _ body: (inout CopyWriter) throws -> Void) throws -> Int {
        let handle = try liveHandle(operation: "copy")
        let start = PQexec(handle, sql)
        try check(start, operation: "copy")
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            PQclear(start)
            throw PostgresError(code: .usage, operation: "copy", message: "the statement is not COPY ... FROM STDIN")
        }
        PQclear(start)
        var writer = CopyWriter(connection: self)
        do {
            try body(&writer)
            try writer.flush()
        } catch {
            _ = PQputCopyEnd(handle, "aborted by client")
            if let result = PQgetResult(handle) { PQclear(result) }
            while let extra = PQgetResult(handle) { PQclear(extra) }
            throw error
        }
        guard PQputCopyEnd(handle, nil) == 1 else { throw lostOrFailed(operation: "copy", sqlState: nil) }
        let result = PQgetResult(handle)
        defer { while let extra = PQgetResult(handle) { PQclear(extra) } }
        try check(result, operation: "copy")
        let count = Int(String(cString: PQcmdTuples(result))) ?? 0
        PQclear(result)
        return count
    }
}

/// Writes rows for `COPY ... FROM STDIN` (text format), buffering about 256 KiB per send.
///
/// A row is either one `writeRow` call or a run of `field` calls closed by `endRow`: the latter write each value's
/// bytes straight into the buffer (a million-row load builds no string per row).
public struct CopyWriter: ~Copyable {
    private let connection: PostgresConnection
    private var buffer: [UInt8] = []
    private var fieldsInRow = 0

    init(connection: PostgresConnection) {
        self.connection = connection
        buffer.reserveCapacity(300_000)
    }

    /// Appends one row; `nil` fields are NULL. Tabs, newlines and backslashes are escaped.
    public mutating func writeRow(_ fields: [String?]) throws {
        for field in fields { try self.field(field) }
        try endRow()
    }

    /// Appends the next field of the current row; `nil` is NULL.
    public mutating func field(_ value: String?) throws {
        startField()
        guard var value else {
            buffer.append(92)
            buffer.append(78)
            return
        }
        try value.withUTF8 { try appendEscaped($0) }
    }

    /// Appends the next field of the current row, an integer in decimal digits written straight into the buffer
    /// (no `String` in between); `nil` is NULL.
    public mutating func field(_ value: Int64?) {
        startField()
        guard let value else {
            buffer.append(92)
            buffer.append(78)
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(48 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                first -= 1
                digits[first] = 45
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    /// Copies `bytes` into the buffer, runs without special bytes at once.
    private mutating func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        var start = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x0E || byte == 0x5C else { continue }
            guard byte == 0 || byte == 9 || byte == 10 || byte == 13 || byte == 0x5C else { continue }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            try append(byte)
            start = index + 1
        }
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
    }

    /// Ends the current row.
    public mutating func endRow() throws {
        buffer.append(10)
        fieldsInRow = 0
        if buffer.count >= 65_536 { try flush() }
    }

    private mutating func startField() {
        if fieldsInRow > 0 { buffer.append(9) }
        fieldsInRow += 1
    }

    /// One byte of a value, with COPY's text-format escaping.
    private mutating func append(_ byte: UInt8) throws {
        switch byte {
        case 92: buffer.append(92); buffer.append(92)
        case 9: buffer.append(92); buffer.append(116)
        case 10: buffer.append(92); buffer.append(110)
        case 13: buffer.append(92); buffer.append(114)
        case 0:
            throw PostgresError(
                code: .usage, operation: "copy", message: "field \(fieldsInRow) contains a NUL byte")
        default: buffer.append(byte)
        }
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        let handle = try connection.liveHandle(operation: "copy")
        let sent = buffer.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
        }
        guard sent == 1 else { throw connection.lostOrFailed(operation: "copy", sqlState: nil) }
        buffer.removeAll(keepingCapacity: true)
    }
}
