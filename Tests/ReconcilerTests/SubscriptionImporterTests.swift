import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

@Suite("SubscriptionImporter against a real database")
struct SubscriptionImporterTests {
    let connection: PostgresConnection

    init() throws {
        connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "import"))
        try Migrator(connection: connection).migrate()
        let configuration = try ConfigurationLoader(environment: [:]).load(
            text: """
                apps:
                  - { id: a1, platform: google, packageName: com.a, serviceAccountFile: /k.json }
                  - { id: a2, platform: google, packageName: com.b, serviceAccountFile: /k.json }
                  - { id: i1, platform: apple, bundleId: com.i, appAppleId: 1, keyId: K, issuerId: I, privateKeyFile: /k.p8,
                      rootCertificates: [/root.cer] }
                """, source: "test")
        try AppRegistry.sync(configuration, on: connection)
    }

    func run(_ csv: String, skipInvalid: Bool = false, assumeUTC: Bool = false) throws -> SubscriptionImporter.Report {
        var reader = CSVReader(bytes: Array(csv.utf8))
        return try SubscriptionImporter(
            connection: connection, knownApps: ["a1", "a2", "i1"], appleApps: ["i1"], assumeUTC: assumeUTC
        )
        .importRecords(from: &reader, source: "test.csv", skipInvalid: skipInvalid)
    }

    func count() throws -> Int {
        try connection.query("SELECT count(*) AS n FROM subscription")[0].decode("n")
    }

    @Test func aTimeWithoutAnOffsetIsABadLineUnlessUTCIsAssumed() throws {
        let csv = "app,store_id,product_id,expires_at\na1,t1,p,2026-12-01T00:00:00Z\na1,t2,p,2026-12-01T00:00:00\n"
        let strict = try run(csv)
        #expect(strict.badLineCount == 1 && !strict.merged)
        #expect(strict.badLines.first?.line == 3)
        #expect(strict.badLines.first?.reason.contains("has no UTC offset") == true)
        #expect(strict.badLines.first?.reason.contains("--assume-utc") == true)
        let assumed = try run(csv, assumeUTC: true)
        #expect(assumed.badLineCount == 0 && assumed.inserted == 2)
        let row = try connection.query("SELECT expires_at FROM subscription WHERE store_id = 't2'")[0]
        #expect(try row.decode("expires_at", as: Date.self) == Date(timeIntervalSince1970: 1_796_083_200))
    }

    /// A subscription no recheck has asked the store about is not entitled (issue 27), whether imported or inserted
    /// by the app backend with the column's default.
    @Test func aNeverCheckedSubscriptionIsNotEntitled() throws {
        _ = try run("app,store_id,product_id,expires_at\na1,t1,p,2026-12-01T00:00:00Z\n")
        try connection.execute(
            "INSERT INTO subscription (app_id, store_id, product_id) VALUES ('a1', 'backend-1', 'p')")
        let rows = try connection.query("SELECT state, entitled FROM subscription ORDER BY store_id")
        #expect(rows.count == 2)
        for row in rows {
            #expect(try row.decode("state", as: String.self) == "unknown")
            #expect(try row.decode("entitled", as: Bool.self) == false)
        }
    }

    /// A stale export imported again after a recheck: the store's product and expiry stay (the next recheck would
    /// record the upgrade a second time, or never ask); a later expiry from the backend is taken.
    @Test func aReimportKeepsWhatTheStoreSaidUnlessTheBackendKnowsALaterExpiry() throws {
        let header = "app,store_id,product_id,expires_at\n"
        _ = try run(header + "a1,t1,basic,2026-12-01T00:00:00Z\na1,t2,basic,2026-12-01T00:00:00Z\n")
        try connection.execute(
            """
            UPDATE subscription SET product_id = 'pro', expires_at = '2027-01-01T00:00:00Z', last_checked_at = now()
            WHERE store_id = 't1'
            """)
        let again = try run(header + "a1,t1,basic,2026-12-01T00:00:00Z\na1,t2,basic,2026-12-02T00:00:00Z\n")
        #expect(again.updated == 1, "only the never-checked row changes")
        func row(_ id: String) throws -> String {
            let row = try connection.query("SELECT product_id, expires_at FROM subscription WHERE store_id = $1", [id])[
                0]
            return "\(try row.decode("product_id", as: String.self)) \(try row.decode("expires_at", as: Date.self))"
        }
        #expect(try row("t1") == "pro 2027-01-01 00:00:00 +0000")
        #expect(try row("t2") == "basic 2026-12-02 00:00:00 +0000")
        _ = try run(header + "a1,t1,basic,2027-02-01T00:00:00Z\n")
        #expect(try row("t1") == "pro 2027-02-01 00:00:00 +0000", "a renewal the backend saw first")
    }

    @Test func lowerCaseTAndZAndAByteOrderMarkAreAccepted() throws {
        let report = try run("\u{FEFF}app,store_id,product_id,expires_at\na1,t1,p,2026-12-01t00:00:00z\n")
        #expect(report.badLineCount == 0 && report.inserted == 1, "\(report.badLines)")
        let row = try connection.query("SELECT expires_at FROM subscription WHERE store_id = 't1'")[0]
        #expect(try row.decode("expires_at", as: Date.self) == Date(timeIntervalSince1970: 1_796_083_200))
    }

    @Test func importsThenReimportsWithoutDuplicates() throws {
        let csv = """
            app,store_id,product_id,expires_at,user_ref
            a1,tok-1,monthly,2026-12-01T00:00:00Z,u1
            a1,tok-2,yearly,2027-01-01T12:30:00.5+01:00,
            a2,tok-1,monthly,,u3

            """
        let first = try run(csv)
        #expect(first.inserted == 3 && first.updated == 0 && first.badLineCount == 0 && first.merged)
        #expect(try count() == 3)
        let again = try run(csv)
        #expect(again.inserted == 0 && again.updated == 0)
        let changed = try run("store_id,app,expires_at,product_id\ntok-1,a1,2026-12-31T00:00:00Z,monthly\n")
        #expect(changed.updated == 1)
        #expect(try count() == 3)
        let row = try connection.query(
            "SELECT expires_at, user_ref FROM subscription WHERE app_id = 'a1' AND store_id = 'tok-1'")[0]
        #expect(try row.decode("expires_at", as: Date.self) == Date(timeIntervalSince1970: 1_798_675_200))
        #expect(try row.decode("user_ref", as: String.self) == "u1")
        let yearly = try connection.query("SELECT expires_at FROM subscription WHERE store_id = 'tok-2'")[0]
        #expect(try yearly.decode("expires_at", as: Date.self) == Date(timeIntervalSince1970: 1_798_803_000.5))
    }

    @Test func badLinesAreReportedAndNothingIsMerged() throws {
        let csv = """
            app,store_id,product_id,expires_at
            a1,good-1,monthly,2026-12-01T00:00:00Z
            zz,tok,monthly,2026-12-01T00:00:00Z
            a1,,monthly,2026-12-01T00:00:00Z
            a1,tok-3,monthly,next tuesday
            a1,tok-4,monthly
            a1,good-1,monthly,2026-12-02T00:00:00Z
            a1,"broken"x,monthly,2026-12-01T00:00:00Z
            a1,good-2,monthly,2026-12-01T00:00:00Z
            """
        let report = try run(csv)
        #expect(report.merged == false)
        #expect(report.rowsValid == 2)
        let byLine = Dictionary(uniqueKeysWithValues: report.badLines.map { ($0.line, $0.reason) })
        #expect(byLine.keys.sorted() == [3, 4, 5, 6, 7, 8])
        #expect(byLine[3]?.contains("app \"zz\" is not configured") == true)
        #expect(byLine[4]?.contains("store_id is empty") == true)
        #expect(byLine[5]?.contains("expires_at") == true)
        #expect(byLine[6]?.contains("expected 4 fields, found 3") == true)
        #expect(byLine[7]?.contains("duplicate of line 2") == true)
        #expect(byLine[8]?.contains("quote") == true)
        #expect(try count() == 0)

        let skipping = try run(csv, skipInvalid: true)
        #expect(skipping.merged && skipping.inserted == 2)
        #expect(try count() == 2)
    }

    /// An App Store original transaction id is digits; any other is named with its line (Apple would refuse it 400
    /// every night).
    @Test func anAppleStoreIdThatIsNotDigitsIsABadLine() throws {
        let report = try run(
            "app,store_id,product_id,expires_at\ni1,2000000123456789,p,\ni1,2000-0001,p,\na1,2000-0001,p,\n")
        #expect(report.badLines.map(\.line) == [3])
        #expect(
            report.badLines.first?.reason.contains("\"2000-0001\" is not an App Store original transaction id") == true)
    }

    @Test func aWrongHeaderIsRejectedWhole() throws {
        let error = #expect(throws: ReconcilerError.self) { try run("app,store_id,product,expires_at\na1,t,p,\n") }
        #expect(error?.message.contains("unknown column \"product\"") == true)
        let missing = #expect(throws: ReconcilerError.self) { try run("app,store_id,product_id\n") }
        #expect(missing?.message.contains("no \"expires_at\" column") == true)
    }

    @Test func hostileValuesAreStoredAsData() throws {
        let nasty = "'; DROP TABLE subscription; --"
        let csv = "app,store_id,product_id,expires_at\na1,\"\(nasty)\",\"p\\\\q\"\"✓\",\n"
        #expect(try run(csv).inserted == 1)
        let row = try connection.query("SELECT store_id, product_id FROM subscription")[0]
        #expect(try row.decode("store_id", as: String.self) == nasty)
        #expect(try row.decode("product_id", as: String.self) == "p\\\\q\"✓")
    }
}
