import CLibPQ

/// The rows a statement returned, read in PostgreSQL's text format.
public final class PostgresRows: RandomAccessCollection {
    private let result: OpaquePointer
    /// Column names, in order.
    public let columns: [String]
    private let columnIndex: [String: Int]

    init(result: OpaquePointer) {
        self.result = result
        let count = Int(PQnfields(result))
        var names: [String] = []
        names.reserveCapacity(count)
        for index in 0..<count { names.append(String(cString: PQfname(result, Int32(index)))) }
        columns = names
        var lookup: [String: Int] = [:]
        for (index, name) in names.enumerated() where lookup[name] == nil { lookup[name] = index }
        columnIndex = lookup
    }

    deinit { PQclear(result) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { Int(PQntuples(result)) }

    public subscript(position: Int) -> PostgresRow { PostgresRow(rows: self, index: position) }

    func index(ofColumn name: String) throws -> Int {
        guard let index = columnIndex[name] else {
            throw PostgresError(
                code: .decoding, operation: "decode", message: "the result has no such column", column: name)
        }
        return index
    }

    func text(row: Int, column: Int) -> String? {
        if PQgetisnull(result, Int32(row), Int32(column)) == 1 { return nil }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        let pointer = PQgetvalue(result, Int32(row), Int32(column))!
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}

/// One row of a result.
public struct PostgresRow {
    let rows: PostgresRows
    let index: Int

    /// Reads a non-NULL column.
    /// - Throws: `PostgresError` (`.decoding`) naming the column when it is NULL, missing or does not fit `type`.
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let value = try decodeIfPresent(column, as: type) else {
            throw PostgresError(
                code: .decoding, operation: "decode", message: "NULL where \(T.self) was expected", column: column)
        }
        return value
    }

    /// Reads a column that may be NULL.
    /// - Throws: `PostgresError` (`.decoding`) naming the column when it is missing or does not fit `type`.
    public func decodeIfPresent<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T? {
        let position = try rows.index(ofColumn: column)
        guard let text = rows.text(row: index, column: position) else { return nil }
        guard let value = T(postgresText: text) else {
            throw PostgresError(
                code: .decoding, operation: "decode",
                message: "value of \(text.utf8.count) bytes does not fit \(T.self)", column: column)
        }
        return value
    }

    /// The raw text of a column, or `nil` for NULL.
    public func text(_ column: String) throws -> String? {
        rows.text(row: index, column: try rows.index(ofColumn: column))
    }
}
