import Foundation
import Yams

/// What a configuration error says: the key path and what was expected, never the value.
extension ConfigurationLoader {
    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "\(join(context.codingPath + [key])): required key is missing"
        case .typeMismatch(let type, let context):
            return "\(join(context.codingPath)): expected \(expected(type))"
        case .valueNotFound(let type, let context):
            return "\(join(context.codingPath)): expected \(expected(type)), found nothing"
        case .dataCorrupted(let context):
            if let choices = choices(context.debugDescription) {
                // Foundation's wording quotes the value and names a Swift type: say what the key takes instead.
                return "\(join(context.codingPath)): expected one of: \(choices.joined(separator: ", "))"
            }
            return "\(join(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "invalid configuration"
        }
    }

    /// The values a configuration enum accepts, when `description` is the decoder's refusal of another value.
    fileprivate static func choices(_ description: String) -> [String]? {
        guard description.hasPrefix("Cannot initialize ") else { return nil }
        let kinds: [(String, [String])] = [
            ("RefundPreference", RefundPreference.allCases.map(\.rawValue)),
            ("Platform", AppConfig.Platform.allCases.map(\.rawValue)),
            ("OnLocked", NightlyConfig.OnLocked.allCases.map(\.rawValue)),
        ]
        return kinds.first { description.hasPrefix("Cannot initialize \($0.0) ") }?.1
    }

    fileprivate static func expected(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int64.Type: return "an integer"
        case is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = "\(type)"
            if name.contains("Array") || name.contains("Sequence") { return "a list" }
            if name.contains("Dictionary") || name.contains("Mapping") { return "a mapping" }
            return "a value of type \(name)"
        }
    }

    static func describe(_ error: YamlError) -> String {
        // YamlError's description quotes the offending line, which could hold a secret: keep only the position.
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _):
            return "\(problem) at line \(mark.line), column \(mark.column)"
        case .composer(_, let problem, let mark, _):
            return "\(problem) at line \(mark.line), column \(mark.column)"
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Keys, not values: a key names a setting, never a secret.
            let keys = duplicates.sorted().map { String($0.prefix(60)) }.joined(separator: ", ")
            return "duplicate key \(keys) in one mapping (first at line \(context.mark.line)): keep one"
        default:
            return "cannot parse"
        }
    }
}
