import Foundation
import Ledger
import Postgres

/// Reading one CSV line of an import: where the columns are, and whether a line is a subscription.
extension SubscriptionImporter {
    struct Columns {
        var app: Int
        var storeId: Int
        var productId: Int
        var expiresAt: Int
        var userRef: Int?
        var count: Int
    }

    static func columnPositions(_ header: [String], source: String) throws -> Columns {
        var positions: [String: Int] = [:]
        for (index, raw) in header.enumerated() {
            // Excel's "CSV UTF-8" starts the file with a byte order mark.
            let unmarked = index == 0 && raw.hasPrefix("\u{FEFF}") ? String(raw.dropFirst()) : raw
            let name = unmarked.trimmingCharacters(in: .whitespaces).lowercased()
            guard requiredColumns.contains(name) || optionalColumns.contains(name) else {
                throw ReconcilerError(
                    .input,
                    "\(source): line 1: unknown column \"\(name)\" (expected app, store_id, product_id, expires_at "
                        + "and optionally user_ref)")
            }
            guard positions[name] == nil else {
                throw ReconcilerError(.input, "\(source): line 1: column \"\(name)\" appears twice")
            }
            positions[name] = index
        }
        for name in requiredColumns where positions[name] == nil {
            throw ReconcilerError(.input, "\(source): line 1: the header has no \"\(name)\" column")
        }
        return Columns(
            app: positions["app"]!, storeId: positions["store_id"]!, productId: positions["product_id"]!,
            expiresAt: positions["expires_at"]!, userRef: positions["user_ref"], count: header.count)
    }

    struct Row {
        var app: String
        var storeId: String
        var productId: String
        var expiresAt: String?
        var userRef: String?
    }

    func validate(_ record: CSVReader.Record, columns: Columns) -> Result<Row, BadLine> {
        let fields = record.fields
        func bad(_ reason: String) -> Result<Row, BadLine> { .failure(BadLine(line: record.line, reason: reason)) }
        guard fields.count == columns.count else {
            return bad("expected \(columns.count) fields, found \(fields.count)")
        }
        if let nul = fields.firstIndex(where: { $0.utf8.contains(0) }) {
            return bad("field \(nul + 1) contains a NUL byte")
        }
        let app = fields[columns.app]
        guard !app.isEmpty else { return bad("app is empty") }
        guard knownApps.contains(app) else { return bad("app \"\(Self.clip(app))\" is not configured") }
        let storeId = fields[columns.storeId]
        guard !storeId.isEmpty else { return bad("store_id is empty") }
        guard storeId.utf8.count <= LedgerLimits.maxKeyBytes else {
            return bad("store_id is longer than \(LedgerLimits.maxKeyBytes) bytes")
        }
        // Apple answers any other id 400 (4000006): refused here, with its line, rather than every night.
        guard
            !appleApps.contains(app) || (storeId.utf8.count <= 32 && storeId.utf8.allSatisfy { (48...57).contains($0) })
        else {
            return bad(
                "store_id \"\(Self.clip(storeId))\" is not an App Store original transaction id (up to 32 digits)")
        }
        let productId = fields[columns.productId]
        guard !productId.isEmpty else { return bad("product_id is empty") }
        guard productId.utf8.count <= 1024 else { return bad("product_id is longer than 1024 bytes") }
        let expiresText = fields[columns.expiresAt].trimmingCharacters(in: .whitespaces)
        var expiresAt: String?
        if !expiresText.isEmpty {
            guard let date = PostgresTimestamp.parse(expiresText),
                date != .distantPast, date != .distantFuture
            else {
                return bad(
                    "expires_at \"\(Self.clip(expiresText))\" is not an RFC 3339 time such as 2026-12-01T00:00:00Z")
            }
            guard assumeUTC || PostgresTimestamp.hasOffset(expiresText) else {
                return bad(
                    "expires_at \"\(Self.clip(expiresText))\" has no UTC offset: add Z or +hh:mm "
                        + "(or pass --assume-utc to read such times as UTC)")
            }
            expiresAt = PostgresTimestamp.format(date)
        }
        var userRef: String?
        if let position = columns.userRef, !fields[position].isEmpty {
            guard fields[position].utf8.count <= 1024 else { return bad("user_ref is longer than 1024 bytes") }
            userRef = fields[position]
        }
        return .success(Row(app: app, storeId: storeId, productId: productId, expiresAt: expiresAt, userRef: userRef))
    }

    /// Shortens a value quoted in an error so a hostile line cannot flood the terminal.
    static func clip(_ text: String) -> String {
        text.count <= 60 ? text : String(text.prefix(57)) + "..."
    }
}
