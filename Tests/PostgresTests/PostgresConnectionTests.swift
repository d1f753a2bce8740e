import Foundation
import Postgres
import TestSupport
import Testing

@Suite("PostgresConnection against a real server")
struct PostgresConnectionTests {
    let conninfo: String

    init() throws {
        conninfo = try TestDatabase.create(prefix: "pgconn")
    }

    @Test func roundTripsEveryTypeAndNull() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let when = Date(timeIntervalSince1970: 1_795_000_000.123456)
        let rows = try connection.query(
            """
            SELECT $1::text AS t, $2::int AS i, $3::bigint AS b, $4::bool AS yes, $5::numeric AS n,
                   $6::timestamptz AS ts, $7::jsonb AS j, $8::text AS nothing, $9::bigint AS nobig
            """,
            [
                "héllo ✓", 42, Int64.max, true, Decimal(string: "12345678901234567890.123456789")!, when,
                PostgresJSON(text: #"{"a": [1, "two", null]}"#), String?.none, Int64?.none,
            ])
        let row = rows[0]
        #expect(try row.decode("t", as: String.self) == "héllo ✓")
        #expect(try row.decode("i", as: Int.self) == 42)
        #expect(try row.decode("b", as: Int64.self) == Int64.max)
        #expect(try row.decode("yes", as: Bool.self) == true)
        #expect(try row.decode("n", as: Decimal.self) == Decimal(string: "12345678901234567890.123456789")!)
        let readBack = try row.decode("ts", as: Date.self)
        #expect(abs(readBack.timeIntervalSince1970 - when.timeIntervalSince1970) < 0.000_001)
        #expect(try row.decode("j", as: PostgresJSON.self).text == #"{"a": [1, "two", null]}"#)
        #expect(try row.decodeIfPresent("nothing", as: String.self) == nil)
        #expect(try row.decodeIfPresent("nobig", as: Int64.self) == nil)
    }

    @Test func decodingErrorsNameTheColumn() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let row = try connection.query("SELECT 'abc'::text AS word, NULL::int AS missing")[0]
        let notANumber = #expect(throws: PostgresError.self) { try row.decode("word", as: Int.self) }
        #expect(notANumber?.column == "word")
        #expect(notANumber?.code == .decoding)
        let null = #expect(throws: PostgresError.self) { try row.decode("missing", as: Int.self) }
        #expect(null?.column == "missing")
        #expect(null?.description.contains("NULL") == true)
        let absent = #expect(throws: PostgresError.self) { try row.decode("nope", as: String.self) }
        #expect(absent?.column == "nope")
    }

    @Test(arguments: ["it's", #"back\slash"#, "'; DROP TABLE victim; --", "\"quoted\"", "tab\tnew\nline", "$1"])
    func hostileTextStaysData(_ text: String) throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE IF NOT EXISTS victim (v text)")
        try connection.execute("INSERT INTO victim (v) VALUES ($1)", [text])
        let count = try connection.query("SELECT count(*) AS c FROM victim WHERE v = $1", [text])[0]
        #expect(try count.decode("c", as: Int.self) >= 1)
        #expect(try connection.query("SELECT to_regclass('victim') IS NOT NULL AS ok")[0].decode("ok", as: Bool.self))
    }

    @Test func nulBytesAreRejectedWithAReason() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT $1::text", ["a\u{0}b"]) }
        #expect(error?.code == .usage)
        #expect(error?.description.contains("$1") == true)
    }

    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        struct Boom: Error {}
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE ledger (id int PRIMARY KEY)")
        #expect(throws: Boom.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO ledger VALUES (1)")
                throw Boom()
            }
        }
        try connection.transaction { connection in try connection.execute("INSERT INTO ledger VALUES (2)") }
        let ids = try connection.query("SELECT id FROM ledger ORDER BY id").map { try $0.decode("id", as: Int.self) }
        #expect(ids == [2])
    }

    @Test func serverErrorsCarrySQLStateAndOperation() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let error = #expect(throws: PostgresError.self) { try connection.execute("SELECT * FROM no_such_table") }
        #expect(error?.sqlState == "42P01")
        #expect(error?.operation == "execute")
        #expect(error?.description.contains("no_such_table") == true)
        // The connection stays usable after a statement error.
        #expect(try connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
    }

    @Test func copyLoadsOneHundredThousandRows() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE bulk (id bigint, label text, note text)")
        let loaded = try connection.copyIn("COPY bulk (id, label, note) FROM STDIN") { writer in
            for id in 0..<100_000 {
                try writer.writeRow([String(id), "row\t\(id)\\x", id % 10 == 0 ? nil : "n\n\(id)"])
            }
        }
        #expect(loaded == 100_000)
        let summary = try connection.query(
            "SELECT count(*) AS c, count(note) AS notes, sum(id) AS total FROM bulk")[0]
        #expect(try summary.decode("c", as: Int.self) == 100_000)
        #expect(try summary.decode("notes", as: Int.self) == 90_000)
        #expect(try summary.decode("total", as: Int64.self) == 4_999_950_000)
        let sample = try connection.query("SELECT label, note FROM bulk WHERE id = 7")[0]
        #expect(try sample.decode("label", as: String.self) == "row\t7\\x")
        #expect(try sample.decode("note", as: String.self) == "n\n7")
    }

    /// Integer fields written as digits straight into the buffer arrive as the same numbers, at both ends of the
    /// range, and `nil` as NULL.
    @Test func copyWritesIntegersAsTheirDigits() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE numbers (n int, value bigint, label text)")
        let values: [Int64?] = [0, 7, -7, 10, -1_000_000_007, .max, .min, nil, 4_990_000_000]
        _ = try connection.copyIn("COPY numbers (n, value, label) FROM STDIN") { writer in
            for (n, value) in values.enumerated() {
                writer.field(Int64(n))
                writer.field(value)
                try writer.field(value.map { "\($0)" })
                try writer.endRow()
            }
        }
        let rows = try connection.query("SELECT value, label FROM numbers ORDER BY n")
        #expect(try rows.map { try $0.decodeIfPresent("value", as: Int64.self) } == values)
        #expect(
            try rows.allSatisfy {
                try $0.decodeIfPresent("value", as: Int64.self).map(String.init)
                    == $0.decodeIfPresent("label", as: String.self)
            })
    }

    @Test func copyErrorsLeaveTheConnectionUsable() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE strict_bulk (id int NOT NULL)")
        let error = #expect(throws: PostgresError.self) {
            try connection.copyIn("COPY strict_bulk (id) FROM STDIN") { writer in
                try writer.writeRow(["1"])
                try writer.writeRow(["not a number"])
            }
        }
        #expect(error?.sqlState == "22P02")
        #expect(try connection.query("SELECT count(*) AS c FROM strict_bulk")[0].decode("c", as: Int.self) == 0)
    }

    @Test func advisoryLockIsExclusiveAcrossConnections() async throws {
        let first = try PostgresConnection(conninfo: conninfo)
        let second = try PostgresConnection(conninfo: conninfo)
        let key = AdvisoryLockKey("storerecon.test.lock")
        #expect(try first.tryAdvisoryLock(key))
        #expect(try second.tryAdvisoryLock(key) == false)
        #expect(try first.advisoryUnlock(key))
        #expect(try second.tryAdvisoryLock(key))
        // A closed session releases its locks (the server notices the disconnect asynchronously).
        second.close()
        var acquired = false
        // Up to 30 s: the server notices late on a loaded host.
        for _ in 0..<1500 where !acquired {
            acquired = try first.tryAdvisoryLock(key)
            if !acquired { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(acquired)
    }

    @Test func advisoryLockKeysAreStable() {
        #expect(AdvisoryLockKey("storerecon.migrate").value == AdvisoryLockKey("storerecon.migrate").value)
        #expect(AdvisoryLockKey("a").value != AdvisoryLockKey("b").value)
        // FNV-1a of the empty string is the offset basis: pins the algorithm against accidental change.
        #expect(AdvisoryLockKey("").value == Int64(bitPattern: 0xcbf2_9ce4_8422_2325))
    }
}
