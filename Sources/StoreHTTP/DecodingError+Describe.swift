import Foundation

extension DecodingError {
    /// The coding path as `a.b[3].c` and a short message, for errors that name the field.
    public static func describe(_ error: DecodingError) -> (field: String?, message: String) {
        func path(_ codingPath: [any CodingKey]) -> String? {
            guard !codingPath.isEmpty else { return nil }
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text
        }
        switch error {
        case .typeMismatch(let type, let context):
            return (path(context.codingPath), "wrong type, expected \(type)")
        case .valueNotFound(let type, let context):
            return (path(context.codingPath), "null or missing value, expected \(type)")
        case .keyNotFound(let key, let context):
            return (path(context.codingPath + [key]), "missing field \"\(key.stringValue)\"")
        case .dataCorrupted(let context):
            // At the top level this is a syntax error: a truncated or non-JSON body.
            let message =
                context.codingPath.isEmpty
                ? "malformed or truncated JSON (\(context.debugDescription))" : context.debugDescription
            return (path(context.codingPath), message)
        @unknown default:
            return (nil, "undecodable")
        }
    }
}
