import CYaml
import Foundation
import Yams

/// Reads, substitutes and validates the configuration file.
///
/// Every failure is a ``ReconcilerError`` with code `.configuration` (exit 78) and one line naming the file, the
/// key path and what was expected. Values are never echoed, since they may be secrets.
public struct ConfigurationLoader: Sendable {
    /// The process environment used for `${NAME}` and `STORERECON_DATABASE_URL`.
    public var environment: [String: String]

    /// Creates a loader over an environment (by default the process's).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// The file to read: `--config`, else `$STORERECON_CONFIG`, else `./storerecon.yaml`.
    public func resolvePath(explicit: String?) -> String {
        explicit ?? environment["STORERECON_CONFIG"] ?? "storerecon.yaml"
    }

    /// Where ``resolvePath(explicit:)`` took the path from, for an operator reading an error.
    public func origin(explicit: String?) -> String {
        if explicit != nil { return "given by --config" }
        if environment["STORERECON_CONFIG"] != nil { return "from $STORERECON_CONFIG" }
        return "the default, as neither --config nor $STORERECON_CONFIG is set"
    }

    /// Loads and validates the file at `path`.
    /// - Parameter origin: how the path was chosen (``origin(explicit:)``), named when the file is missing.
    public func load(path: String, origin: String? = nil) throws -> Configuration {
        guard let data = FileManager.default.contents(atPath: path) else {
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            let why =
                FileManager.default.fileExists(atPath: path)
                ? "cannot read the configuration file (check its permissions)" : "no configuration file there"
            throw ReconcilerError(
                .configuration,
                "\(path): \(why); looked at \(absolute)\(origin.map { " (\($0))" } ?? ""); "
                    + "point elsewhere with --config FILE or STORERECON_CONFIG=FILE")
        }
        var configuration = try load(text: String(decoding: data, as: UTF8.self), source: path)
        configuration.resolveFiles(against: URL(fileURLWithPath: path).deletingLastPathComponent())
        return configuration
    }

    /// Loads and validates configuration text; `source` names it in errors.
    public func load(text: String, source: String) throws -> Configuration {
        do {
            return try parse(text: text, source: source)
        } catch let error as ReconcilerError where error.message.utf8.count > 1000 {
            // Hostile or mangled files can make YAML and decoding errors quote kilobytes; one line is enough.
            throw ReconcilerError(error.code, String(error.message.prefix(900)) + " …")
        }
    }

    private func parse(text: String, source: String) throws -> Configuration {
        if let problem = Self.structuralProblem(text) {
            throw ReconcilerError(.configuration, "\(source): \(problem)")
        }
        let node: Node
        do {
            node = try Yams.compose(yaml: text) ?? Node.mapping(Node.Mapping([]))
        } catch let error as YamlError {
            throw ReconcilerError(.configuration, "\(source): not valid YAML: \(Self.describe(error))")
        } catch {
            throw ReconcilerError(.configuration, "\(source): not valid YAML")
        }
        let substituted = try substitute(node, path: [], source: source)
        var configuration: Configuration
        do {
            configuration = try YAMLDecoder().decode(Configuration.self, from: substituted)
        } catch let error as DecodingError {
            throw ReconcilerError(.configuration, "\(source): \(Self.describe(error))")
        }
        if let url = environment["STORERECON_DATABASE_URL"], !url.isEmpty {
            configuration.database.url = url
        }
        try validate(configuration, source: source)
        return configuration
    }

    /// The most bytes and the deepest nesting a configuration file may have.
    static let maxBytes = 1 << 20
    static let maxDepth = 64

    /// Refuses what no configuration needs and what would make composing explode before it is decoded: aliases
    /// (`*a` expanding `&a` exponentially), very deep nesting and very large files. Runs libyaml's event parser,
    /// which keeps no tree, so the check itself is bounded.
    static func structuralProblem(_ text: String) -> String? {
        if text.utf8.count > maxBytes { return "larger than \(maxBytes / 1024) KiB; not a configuration file" }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer -> String? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var depth = 0
            while true {
                var event = yaml_event_t()
                // A syntax error is left to the composer, which reports it with its line.
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_ALIAS_EVENT:
                    return "YAML aliases (*name) are not accepted in the configuration; write the values out"
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    depth += 1
                    if depth > maxDepth { return "nested more than \(maxDepth) levels deep" }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    depth -= 1
                case YAML_STREAM_END_EVENT:
                    return nil
                default:
                    break
                }
            }
        }
    }

    private func validate(_ configuration: Configuration, source: String) throws {
        try validateApps(configuration, source: source)
        let recheck = configuration.recheck
        guard (1...64).contains(recheck.concurrency) else {
            throw ReconcilerError(.configuration, "\(source): recheck.concurrency: expected 1...64")
        }
        guard (1...64).contains(configuration.sync.googleSlices) else {
            throw ReconcilerError(.configuration, "\(source): sync.googleSlices: expected 1...64")
        }
        guard (1...64).contains(configuration.sync.appleConcurrency) else {
            throw ReconcilerError(.configuration, "\(source): sync.appleConcurrency: expected 1...64")
        }
        guard configuration.sync.appleBackfillPerNight >= 0 else {
            throw ReconcilerError(.configuration, "\(source): sync.appleBackfillPerNight: expected 0 or more")
        }
        guard configuration.sync.appleSweepCustomers >= 0 else {
            throw ReconcilerError(.configuration, "\(source): sync.appleSweepCustomers: expected 0 or more")
        }
        guard (0...1).contains(configuration.sync.backfillShare) else {
            throw ReconcilerError(.configuration, "\(source): sync.backfillShare: expected a number from 0 to 1")
        }
        let zone = configuration.reports.timeZone
        // `GMT+05` is UTC+5 to Foundation and UTC-5 to PostgreSQL (POSIX): the report's range and its days would
        // disagree. `Etc/GMT-5` means the same to both.
        guard TimeZone(identifier: zone) != nil, zone.wholeMatch(of: /(?i)(GMT|UTC)[+-].*/) == nil else {
            throw ReconcilerError(
                .configuration,
                "\(source): reports.timeZone: expected an IANA time zone name (such as Europe/Berlin or Etc/GMT-5)")
        }
    }

    /// Each app's keys, one id and one store app per entry, one Pub/Sub subscription per app, and limits only of
    /// configured apps and of their platform.
    private func validateApps(_ configuration: Configuration, source: String) throws {
        var seen = Set<String>()
        var subscriptions: [String: String] = [:]
        var storeApps: [String: String] = [:]
        for (index, app) in configuration.apps.enumerated() {
            do {
                try app.validate(path: "apps[\(index)]")
            } catch let error as ReconcilerError {
                throw ReconcilerError(.configuration, "\(source): \(error.message)")
            }
            guard seen.insert(app.id).inserted else {
                throw ReconcilerError(.configuration, "\(source): apps[\(index)].id: duplicate app id \(app.id)")
            }
            // Quotas and refunds are kept per app id: one store app under two ids would get the store's quota twice
            // and have each refund counted twice. Apple's environments are separate stores.
            let storeKey = "\(app.platform.rawValue) \(app.storeAppId) \(app.platform == .apple ? app.environment : "")"
            if let other = storeApps.updateValue(app.id, forKey: storeKey) {
                let key = app.platform == .apple ? "bundleId" : "packageName"
                throw ReconcilerError(
                    .configuration,
                    "\(source): apps[\(index)].\(key): \(app.storeAppId) is app \(other)'s too: configure each store "
                        + "app once (its quota and its refunds would be counted twice)")
            }
            // A pull takes a message from the subscription for every reader: an app would acknowledge, as another
            // package's, the reviews the other app must answer.
            if let subscription = app.rtdnSubscription {
                if let other = subscriptions[subscription] {
                    throw ReconcilerError(
                        .configuration,
                        "\(source): apps[\(index)].rtdnSubscription: \(subscription) is app \(other)'s too: give each "
                            + "app a subscription of its own on the topic (Runbook.md, \"The Pub/Sub subscription\")")
                }
                subscriptions[subscription] = app.id
            }
        }
        for key in configuration.limits.keys.sorted() where !seen.contains(key) {
            throw ReconcilerError(.configuration, "\(source): limits.\(key): no app has this id")
        }
        for app in configuration.apps {
            if let key = configuration.limits[app.id]?.keys(notOf: app.platform).first {
                throw ReconcilerError(
                    .configuration,
                    "\(source): limits.\(app.id).\(key): \(app.platform == .apple ? "a Google" : "an Apple") limit, and "
                        + "\(app.id) is a \(app.platform.rawValue) app")
            }
        }
    }

    /// Replaces `${NAME}` in every scalar with the environment variable NAME; an unset one is an error.
    private func substitute(_ node: Node, path: [String], source: String) throws -> Node {
        switch node {
        case .scalar(var scalar):
            guard scalar.string.contains("${") else { return node }
            scalar.string = try expand(scalar.string, path: path, source: source)
            return .scalar(scalar)
        case .mapping(var mapping):
            var pairs: [(Node, Node)] = []
            for (key, value) in mapping {
                pairs.append((key, try substitute(value, path: path + [key.string ?? "?"], source: source)))
            }
            mapping = Node.Mapping(pairs, mapping.tag, mapping.style, mapping.mark)
            return .mapping(mapping)
        case .sequence(var sequence):
            var items: [Node] = []
            for (index, item) in sequence.enumerated() {
                items.append(try substitute(item, path: path + ["[\(index)]"], source: source))
            }
            sequence = Node.Sequence(items, sequence.tag, sequence.style, sequence.mark)
            return .sequence(sequence)
        case .alias:
            return node
        }
    }

    private func expand(_ text: String, path: [String], source: String) throws -> String {
        var output = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            output += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw ReconcilerError(.configuration, "\(source): \(Self.join(path)): unterminated ${ in value")
            }
            let name = String(rest[start.upperBound..<end])
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw ReconcilerError(.configuration, "\(source): \(Self.join(path)): bad variable name in ${...}")
            }
            guard let value = environment[name] else {
                throw ReconcilerError(
                    .configuration, "\(source): \(Self.join(path)): environment variable \(name) is not set")
            }
            output += value
            rest = rest[rest.index(after: end)...]
        }
        return output + rest
    }

    static func join(_ path: [String]) -> String {
        var text = ""
        // A key is echoed as written; a hostile file's keys can be megabytes long.
        for component in path.map({ $0.count <= 60 ? $0 : $0.prefix(57) + "..." }) {
            if component.hasPrefix("[") {
                text += component
            } else {
                text += text.isEmpty ? component : ".\(component)"
            }
        }
        return text.isEmpty ? "(top level)" : text
    }

    static func join(_ codingPath: [any CodingKey]) -> String {
        join(codingPath.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue })
    }

}

/// Throws a `DecodingError` naming the first key of the mapping that `keys` does not list.
func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ decoder: any Decoder, _ keys: Keys.Type) throws {
    let container = try decoder.container(keyedBy: AnyConfigKey.self)
    let known = Set(Keys.allCases.map(\.stringValue))
    for key in container.allKeys where !known.contains(key.stringValue) {
        let expected = Keys.allCases.map(\.stringValue).joined(separator: ", ")
        throw DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: decoder.codingPath + [key], debugDescription: "unknown key (expected one of: \(expected))"))
    }
}

struct AnyConfigKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}
