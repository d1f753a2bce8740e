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
public struct CopyWriter: ~Copyable {
    private let connection: PostgresConnection
    private var buffer: [UInt8] = []

    init(connection: PostgresConnection) {
        self.connection = connection
        buffer.reserveCapacity(300_000)
    }

    /// Appends one row; `nil` fields are NULL. Tabs, newlines and backslashes are escaped.
    public mutating func writeRow(_ fields: [String?]) throws {
        for (index, field) in fields.enumerated() {
            if index > 0 { buffer.append(9) }
            guard let field else {
                buffer.append(92)
                buffer.append(78)
                continue
            }
            for byte in field.utf8 {
                switch byte {
                case 92: buffer.append(92); buffer.append(92)
                case 9: buffer.append(92); buffer.append(116)
                case 10: buffer.append(92); buffer.append(110)
                case 13: buffer.append(92); buffer.append(114)
                case 0:
                    throw PostgresError(
                        code: .usage, operation: "copy", message: "field \(index + 1) contains a NUL byte")
                default: buffer.append(byte)
                }
            }
        }
        buffer.append(10)
        if buffer.count >= 262_144 { try flush() }
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
