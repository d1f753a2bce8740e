import Foundation

/// A Swift value that can be sent as a query parameter, in PostgreSQL's text format.
///
/// `nil` means SQL NULL. Parameters are always sent separately from the SQL text (`PQexecParams`), so no value
/// can change a statement.
public protocol PostgresEncodable: Sendable {
    /// The parameter in PostgreSQL text format, or `nil` for NULL.
    var postgresText: String? { get }
}

extension String: PostgresEncodable {
    public var postgresText: String? { self }
}

extension Substring: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Int: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Int64: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Int32: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Bool: PostgresEncodable {
    public var postgresText: String? { self ? "t" : "f" }
}

extension Double: PostgresEncodable {
    public var postgresText: String? { "\(self)" }
}

extension Decimal: PostgresEncodable {
    public var postgresText: String? { "\(self)" }
}

extension Date: PostgresEncodable {
    public var postgresText: String? { PostgresTimestamp.format(self) }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresText: String? {
        switch self {
        case .none: return nil
        case .some(let value): return value.postgresText
        }
    }
}

/// A JSON document for a `json` or `jsonb` column, held as its UTF-8 text.
public struct PostgresJSON: PostgresEncodable, Equatable, Hashable {
    /// The JSON text.
    public var text: String

    /// Wraps JSON text (it is not re-validated here; the server checks it).
    public init(text: String) { self.text = text }

    /// Wraps JSON bytes.
    public init(data: Data) { self.text = String(decoding: data, as: UTF8.self) }

    public var postgresText: String? { text }
}

/// An array of text values for a `text[]` parameter (for `= ANY($1)`).
public typealias PostgresTextArray = PostgresArray<String>

/// An array of text values that may be NULL, for a typed array parameter (`$1::bigint[]`, `$1::int[]`).
public typealias PostgresNullableTextArray = PostgresArray<String?>

/// An array of typed values for a typed array parameter (`$1::bigint[]`, `$1::timestamptz[]`, `$1::boolean[]`):
/// each element is written as its own parameter would be, `nil` as SQL NULL.
public struct PostgresArray<Element: PostgresEncodable>: PostgresEncodable {
    /// The elements.
    public var elements: [Element]

    /// Wraps the elements.
    @inlinable public init(_ elements: [Element]) { self.elements = elements }

    // Inlinable so that each element type's encoding is specialized where the array is built (a page's parameters
    // are tens of thousands of elements).
    @inlinable public var postgresText: String? {
        PostgresArrayLiteral.make(count: elements.count) { index in elements[index].postgresText }
    }
}

extension PostgresArray: Equatable where Element: Equatable {}

/// Builds an array literal (`{"a","b\"c",NULL}`) in UTF-8 bytes: pages of thousands of rows go through here, and
/// appending to a `String` scalar by scalar cost more than the database's own work on them.
@usableFromInline enum PostgresArrayLiteral {
    @usableFromInline static func make(count: Int, element: (Int) -> String?) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(2 + count * 24)
        out.append(UInt8(ascii: "{"))
        for index in 0..<count {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard var text = element(index) else {
                out.append(contentsOf: "NULL".utf8)
                continue
            }
            out.append(UInt8(ascii: "\""))
            text.withUTF8 { bytes in
                if !bytes.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                    out.append(contentsOf: bytes)
                    return
                }
                for byte in bytes {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                    out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
