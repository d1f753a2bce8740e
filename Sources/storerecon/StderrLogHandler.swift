import Foundation
import Logging

/// Writes one event per line to stderr, as text (`2026-11-22T04:00:00Z info job=... message`) or JSON lines.
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
            var text = "\(time) \(event.level)"
            for key in merged.keys.sorted() { text += " \(key)=\(Self.text(merged[key]!))" }
            line = text + " \(event.message)\n"
        case .json:
            var object: [String: Any] = ["time": time, "level": "\(event.level)", "message": "\(event.message)"]
            for (key, value) in merged { object[key] = Self.json(value) }
            // Unescaped slashes keep file paths and request paths greppable as written.
            let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: options)) ?? Data()
            line = String(decoding: data, as: UTF8.self) + "\n"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }

    private static func text(_ value: Logger.MetadataValue) -> String {
        let rendered = "\(value)"
        return rendered.contains(" ") ? "\"\(rendered)\"" : rendered
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
