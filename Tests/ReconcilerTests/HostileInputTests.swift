import Foundation
import Ledger
import Postgres
import Reconciler
import TestSupport
import Testing

/// Property tests over hostile input for the CSV reader, the subscription importer and the configuration loader:
/// thousands of seeded cases each, no crash, no hang, bounded output, and a rejection that names the line, key or
/// field. Strings that PostgreSQL text can hold are stored exactly; NUL is refused with the line and the field.
@Suite("hostile input: CSV, import, configuration")
struct HostileInputTests {
    static let cases = 3000

    /// RFC 4180 text of records, quoting fields that need it (and, at random, some that do not).
    static func csv(_ records: [[String]], crlf: Bool, input: inout HostileInput) -> [UInt8] {
        var text = ""
        for record in records {
            text += record.map { field in
                let needs = field.utf8.contains { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }
                return needs || field.isEmpty || input.int(0...3) == 0
                    ? "\"" + String(decoding: field.utf8.flatMap { $0 == 34 ? [34, 34] : [$0] }, as: UTF8.self) + "\""
                    : field
            }.joined(separator: ",")
            text += crlf ? "\r\n" : "\n"
        }
        return Array(text.utf8)
    }

    @Test func recordsOfHostileStringsRoundTripThroughTheCSVReader() throws {
        var input = HostileInput(seed: 4180)
        for index in 0..<1000 {
            let width = input.int(1...5)
            let records = (0..<input.int(1...6)).map { _ in
                (0..<width).map { _ in input.hostileString(maxRun: 2000) }
            }
            var reader = CSVReader(bytes: Self.csv(records, crlf: input.int(0...1) == 0, input: &input))
            var read: [[String]] = []
            while let record = try reader.next() { read.append(record.fields) }
            #expect(read == records, "case \(index)")
        }
    }

    @Test func mutatedCSVEndsInRecordsOrMalformedLinesThatSayWhy() throws {
        let sample = Array(
            #"""
            app,store_id,product_id,expires_at,user_ref
            a1,"tok,1","monthly ""plus""",2026-12-01T00:00:00Z,"multi
            line"
            a1,tok-2,yearly,,u2\#r
            a2,tok-3,monthly,2027-01-01T00:00:00+01:00,
            """#.utf8)
        var input = HostileInput(seed: 0xC5F)
        for index in 0..<Self.cases {
            let bytes = input.mutate(sample)
            var reader = CSVReader(bytes: bytes, maxFieldBytes: 4096)
            var lastLine = 0
            var steps = 0
            while steps <= bytes.count + 1 {
                steps += 1
                do {
                    guard let record = try reader.next() else { break }
                    #expect(record.line > lastLine, "case \(index)")
                    lastLine = record.line
                    #expect(record.fields.allSatisfy { $0.utf8.count <= 4096 }, "case \(index)")
                } catch let malformed as CSVReader.Malformed {
                    #expect(malformed.line > lastLine && !malformed.reason.isEmpty, "case \(index)")
                    lastLine = malformed.line
                }
            }
            #expect(steps <= bytes.count + 1, "case \(index): the reader does not end")
        }
    }

    /// A runaway quote is cut at the field limit, and the lines after it are read again.
    @Test func aRunawayQuoteIsBoundedAndReadingResumes() throws {
        var bytes = Array("a,\"".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 300_000)
        bytes += Array("\nb,c\n".utf8)
        var reader = CSVReader(bytes: bytes, maxFieldBytes: 100_000)
        #expect(throws: CSVReader.Malformed.self) { try reader.next() }
        let next = try reader.next()
        #expect(next?.fields == ["b", "c"] && next?.line == 2)
    }

    /// Quoted fields across the reader's 1 MiB chunk boundaries, read from a file.
    @Test func fieldsAcrossChunkBoundariesRoundTripFromAFile() throws {
        var input = HostileInput(seed: 1 << 20)
        let records = (0..<600).map { _ in [input.hostileString(maxRun: 5000), input.hostileString(maxRun: 5000)] }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("chunks-\(UUID().uuidString).csv")
        try Data(Self.csv(records, crlf: true, input: &input)).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var reader = CSVReader(fileHandle: handle)
        var read: [[String]] = []
        while let record = try reader.next() { read.append(record.fields) }
        #expect(try Data(contentsOf: url).count > 2 << 20)
        #expect(read == records)
    }

    // MARK: Import into PostgreSQL

    @Test func hostileIdentifiersAreImportedExactlyAndNULIsRefusedByLineAndField() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "hostileimport"))
        try Migrator(connection: connection).migrate()
        let configuration = try ConfigurationLoader(environment: [:]).load(
            text: "apps:\n  - { id: a1, platform: google, packageName: com.a, serviceAccountFile: /k.json }\n",
            source: "test")
        try AppRegistry.sync(configuration, on: connection)
        var input = HostileInput(seed: 5432)
        var rows: [[String]] = [["app", "store_id", "product_id", "expires_at", "user_ref"]]
        var expected: [String: (product: String, user: String?)] = [:]
        while rows.count <= 400 {
            let storeId = input.hostileString(allowNUL: false, maxRun: 1000)
            let product = input.hostileString(allowNUL: false, maxRun: 300)
            let user = input.int(0...3) == 0 ? "" : input.hostileString(allowNUL: false, maxRun: 300)
            guard expected[storeId] == nil, storeId.utf8.count <= LedgerLimits.maxKeyBytes, product.utf8.count <= 1024,
                user.utf8.count <= 1024
            else { continue }
            expected[storeId] = (product, user.isEmpty ? nil : user)
            rows.append(["a1", storeId, product, "2027-01-01T00:00:00Z", user])
        }
        let nulRows = [
            ["a1", "tok\0en", "monthly", "", ""], ["a1", "token-2", "month\0ly", "", ""],
            ["a1", "token-3", "monthly", "", "user\0"],
        ]
        let importer = SubscriptionImporter(connection: connection, knownApps: ["a1"])
        var reader = CSVReader(bytes: Self.csv(rows + nulRows, crlf: false, input: &input))
        let report = try importer.importRecords(from: &reader, source: "hostile.csv", skipInvalid: true)
        #expect(report.badLineCount == 3)
        let reasons = report.badLines.map(\.description)
        let fields = ["field 2", "field 3", "field 5"]
        for (reason, field) in zip(reasons, fields) {
            #expect(reason.contains("\(field) contains a NUL byte"), "\(reason)")
        }
        #expect(report.inserted == expected.count)
        let stored = try connection.query("SELECT store_id, product_id, user_ref FROM subscription WHERE app_id = 'a1'")
        #expect(stored.count == expected.count)
        for row in stored {
            let storeId: String = try row.decode("store_id")
            let wanted = try #require(expected[storeId], "stored a store_id that was not imported")
            #expect(try row.decode("product_id", as: String.self) == wanted.product)
            #expect(try row.decodeIfPresent("user_ref", as: String.self) == wanted.user)
        }
    }

    // MARK: Configuration

    static let configuration = """
        database:
          url: "host=/tmp dbname=recon password=${DB_PASSWORD}"
        apps:
          - id: acme-ios
            platform: apple
            bundleId: com.acme.app
            appAppleId: 1234567890
            environment: production
            issuerId: "57246542-96fe-1a63-e053-0824d011072a"
            keyId: "2X9R4HXF34"
            privateKeyFile: /k.p8
            rootCertificates: [/etc/storerecon/AppleRootCA-G3.cer]
            baseURL: https://api.storekit.apple.com
          - id: acme-android
            platform: google
            packageName: com.acme.app
            serviceAccountFile: /etc/storerecon/play-sa.json
            baseURL: http://127.0.0.1:8787
        limits:
          acme-android: { voidedPerDay: 3000 }
        recheck: { lead: 48h, lag: 12h, concurrency: 4 }
        sync: { googleOverlap: 1h, backfillShare: 0.5 }
        products:
          premium.monthly: { tier: 2, priceMilli: 9990, currency: USD }
        reports: { timeZone: UTC }
        """

    @Test func mutatedConfigurationLoadsOrFailsNamingTheFileAndKey() throws {
        let secret = "Sekr1t-\(UInt32.random(in: 0...UInt32.max))"
        let loader = ConfigurationLoader(environment: ["DB_PASSWORD": secret])
        _ = try loader.load(text: Self.configuration, source: "storerecon.yaml")
        var input = HostileInput(seed: 0x7A3)
        var failures = 0
        for index in 0..<Self.cases {
            let text = input.mutate(Self.configuration)
            do {
                _ = try loader.load(text: text, source: "storerecon.yaml")
            } catch let error as ReconcilerError {
                failures += 1
                #expect(error.code == .configuration, "case \(index)")
                #expect(error.message.hasPrefix("storerecon.yaml: "), "case \(index): \(error.message.prefix(200))")
                #expect(!error.message.contains(secret), "case \(index): the password is echoed")
                #expect(error.message.utf8.count < 4096, "case \(index): a \(error.message.utf8.count)-byte message")
            }
        }
        #expect(failures > Self.cases / 2)
    }

    /// Aliases that expand exponentially, and deep nesting: a clear error, not a hang or a crash.
    @Test(arguments: ["aliases", "nested sequences", "nested mappings"])
    func explosiveYAMLIsAClearError(shape: String) throws {
        var text: String
        switch shape {
        case "aliases":
            text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
            for level in 1...9 {
                text +=
                    "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
                text += "]\n"
            }
            text += "products: *a9\n"
        case "nested sequences":
            text = "products: " + String(repeating: "[", count: 100_000)
        default:
            text = "products: " + String(repeating: "{a: ", count: 100_000)
        }
        #expect {
            _ = try ConfigurationLoader(environment: [:]).load(text: text, source: "bomb.yaml")
        } throws: { error in
            guard let error = error as? ReconcilerError else { return false }
            return error.code == .configuration && error.message.hasPrefix("bomb.yaml: ")
        }
    }
}
