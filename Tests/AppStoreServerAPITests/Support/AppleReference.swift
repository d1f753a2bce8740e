import Foundation
import Testing

/// Apple's own test data, read from `../shared/reference/apple/` beside the package (never copied into it).
enum AppleReference {
    /// `<package root>/../shared/reference/apple`.
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        // Support/AppleReference.swift → AppStoreServerAPITests → Tests → package root
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent().appendingPathComponent("shared/reference/apple")
    }()

    static func data(_ path: String) throws -> Data {
        let url = root.appendingPathComponent(path)
        return try #require(FileManager.default.contents(atPath: url.path), "missing reference file \(url.path)")
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func path(_ path: String) -> String { root.appendingPathComponent(path).path }

    /// The base64 body of a PEM certificate, which is what `x5c` holds (some files carry a text dump before it).
    static func certificateBase64(_ path: String) throws -> String {
        let lines = try text(path).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let begin = try #require(lines.firstIndex(of: "-----BEGIN CERTIFICATE-----"))
        let end = try #require(lines.firstIndex(of: "-----END CERTIFICATE-----"))
        return lines[(begin + 1)..<end].joined()
    }
}
