import Foundation
import Logging
import Reconciler

/// Writes one event per line to stderr, as logfmt text
/// (`time=2026-11-22T04:00:00.000Z level=info app=acme job=google_voided msg="1200 rows stored"`) or JSON lines.
/// Whatever a message or value holds (line breaks, tabs, quotes, control characters), an event stays one line that
/// parses: logfmt values with anything but plain characters are quoted with `\"`, `\\`, `\n`, `\t`, `\r` and
/// `\u{...}` escapes; JSON escapes them itself.
///
/// Metadata is printed as given: callers never put secrets in it (tokens, keys and passwords stay inside the
/// clients and the Postgres layer).
struct StderrLogHandler: LogHandler {
    let label: String
    let format: LogFormat
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let time = Self.timestamp()
        let line: String
        switch format {
        case .text:
            var text = "time=\(time) level=\(event.level)"
            for key in merged.keys.sorted() { text += " \(Self.logfmtKey(key))=\(Self.logfmt("\(merged[key]!)"))" }
            line = text + " msg=\(Self.logfmt("\(event.message)"))\n"
        case .json:
            var object: [String: Any] = ["time": time, "level": "\(event.level)", "message": "\(event.message)"]
            for (key, value) in merged { object[key] = Self.json(value) }
            // Unescaped slashes keep file paths and request paths greppable as written.
            let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: options)) ?? Data()
            line = String(decoding: data, as: UTF8.self) + "\n"
        }
        // On a terminal the progress lines (one per running app) are erased first and drawn again below the event.
        if Self.terminal {
            ProgressBoard.shared.print(line)
        } else {
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Whether stderr is a terminal (where a progress line may be drawn).
    static let terminal = isatty(STDERR_FILENO) == 1

    /// A logfmt value: bare when it is plain, else quoted and escaped.
    static func logfmt(_ value: String) -> String {
        let plain =
            !value.isEmpty
            && value.unicodeScalars.allSatisfy {
                $0.value > 0x20 && $0.value != 0x7f && !"\"=\\".unicodeScalars.contains($0)
            }
        if plain { return value }
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f || (0x80..<0xa0).contains(scalar.value)
                    || scalar == "\u{2028}" || scalar == "\u{2029}"
                {
                    quoted += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    quoted.unicodeScalars.append(scalar)
                }
            }
        }
        return quoted + "\""
    }

    /// A logfmt key: only characters a key may hold.
    static func logfmtKey(_ key: String) -> String {
        let cleaned = String(
            key.unicodeScalars.filter { $0.value > 0x20 && $0.value < 0x7f && !"\"=\\".unicodeScalars.contains($0) })
        return cleaned.isEmpty ? "_" : cleaned
    }

    private static func json(_ value: Logger.MetadataValue) -> Any {
        switch value {
        case .string(let string): return string
        case .stringConvertible(let convertible): return convertible.description
        case .array(let array): return array.map(json)
        case .dictionary(let dictionary): return dictionary.mapValues(json)
        }
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}
