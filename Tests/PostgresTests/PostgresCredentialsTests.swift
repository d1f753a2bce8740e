import Foundation
import Postgres
import TestSupport
import Testing

/// libpq quotes a conninfo or URI it cannot parse back in its message, whole; none of those messages may carry the
/// password into an error (and so into a log, `status`, `job_run` or the metrics file).
@Suite("PostgresConnection never lets libpq quote a password")
struct PostgresCredentialsTests {
    static let password = "S3cretPW-x9"

    /// Every malformed shape libpq quotes back (URIs whose host, port, path or query it cannot parse), and conninfo
    /// strings with bad options or values.
    static let malformed: [String] = [
        "postgresql://postgres:\(password)@[::1:bad/x",
        "postgresql://postgres:\(password)@[::1/x",
        "postgres://postgres:\(password)@[::1]x/db",
        "postgresql://postgres:\(password)@host/db?bogus=1",
        "postgresql://postgres:\(password)@host/db%zz",
        "postgresql://postgres:\(password)@host:99999999/db",
        "postgresql://postgres:\(password)@host:port/db",
        "postgresql://postgres:\(password)@host/db?sslmode=bogus",
        "postgresql://postgres@host/db?password=\(password)&bogus=2",
        "postgresql://postgres:\(password)@host/db?password",
        "postgresql://us%zzer:\(password)@host/db",
        "host=/tmp password=\(password) hostx=1",
        "host=/tmp password=\(password) sslmode=bogus",
        "host=/tmp password='\(password)' port=99999999",
        "password=\(password) host=/tmp unterminated='abc",
        "password = '\(password)' = x",
        "host=/tmp PASSWORD=\(password) nosuch",
    ]

    @Test(arguments: malformed)
    func malformedSettingsAreConfigurationErrorsWithoutThePassword(_ conninfo: String) throws {
        let error = try #require(throws: PostgresError.self) { try PostgresConnection(conninfo: conninfo) }
        #expect(!error.description.contains(Self.password), "\(error)")
        #expect(!error.message.contains(Self.password))
        #expect(error.code == .badSettings, "\(error)")
        #expect(error.isConfiguration)
        #expect(!error.isRetryable)
    }

    /// An unquoted space in the password: libpq takes the first word as the password and quotes the rest back.
    @Test func noPartOfAPasswordWithASpaceIsQuoted() throws {
        let error = try #require(throws: PostgresError.self) {
            try PostgresConnection(conninfo: "host=/tmp password=S3cret PW-x9 dbname=x")
        }
        #expect(!error.message.contains("S3cret") && !error.message.contains("PW-x9"), "\(error)")
        #expect(error.message.contains("missing \"=\" after \"…\""), "\(error)")
        #expect(error.code == .badSettings)
    }

    /// A `/` or `@` left unencoded in a URI's password (common in generated passwords): libpq would take its pieces
    /// for the host, port or database and quote them back; the connection is refused first, quoting nothing.
    @Test(arguments: ["postgresql://storerecon:ab1/cd2@db/x", "postgresql://storerecon:ab1@cd2@db/x"])
    func aURIPasswordWithADelimiterIsRefusedBeforeLibpqSplitsIt(_ conninfo: String) throws {
        let error = try #require(throws: PostgresError.self) { try PostgresConnection(conninfo: conninfo) }
        #expect(!error.description.contains("ab1") && !error.description.contains("cd2"), "\(error)")
        #expect(error.message.contains("percent-encode them"), "\(error)")
        #expect(error.code == .badSettings)
        for valid in [
            "postgresql://storerecon:ab1%2Fcd2@db/x", "host=/tmp password=a/b@c", "postgresql://u:pa?ss#1@db/x",
            "postgresql://db:5432/x?user=admin@srv", "postgresql://u:pw@db:5432/x?application_name=a@b",
            "postgresql://[::1]:5432/x", "postgresql:///storerecon", "postgresql://u@db/x",
        ] {
            #expect(!PostgresCredentials.uriPasswordNeedsEncoding(valid), "\(valid)")
        }
    }

    @Test func aPasswordWithPercentEscapesIsRemovedInBothSpellings() throws {
        let conninfo = "postgresql://postgres:S3cret%21PW%2Fx@[::1:bad/x"
        let error = try #require(throws: PostgresError.self) { try PostgresConnection(conninfo: conninfo) }
        #expect(!error.description.contains("S3cret%21PW%2Fx"))
        #expect(!error.description.contains("S3cret!PW/x"))
    }

    @Test func redactFindsUserinfoAndKeywordPasswords() {
        #expect(
            PostgresCredentials.redact("invalid: \"postgresql://u:pw@h/db\" and password=abc host=x")
                == "invalid: \"postgresql://u:***@h/db\" and password=*** host=x")
        #expect(PostgresCredentials.redact("password = 'a b\\' c' port=1") == "password = *** port=1")
        #expect(PostgresCredentials.redact("?password=abc&sslmode=x") == "?password=***&sslmode=x")
        #expect(PostgresCredentials.redact("postgresql://user@h/db") == "postgresql://user@h/db")
        #expect(PostgresCredentials.redact("no secret here") == "no secret here")
        #expect(PostgresCredentials.passwords(in: "postgresql://u:a%40b@h/") == ["a%40b", "a@b"])
    }

    @Test func anyErrorMessageIsScrubbed() {
        let error = PostgresError(
            code: .server, operation: "query", message: "echo of postgresql://u:hunter2@h and password=hunter3")
        #expect(!error.description.contains("hunter2"))
        #expect(!error.description.contains("hunter3"))
    }

    @Test func aMissingDatabaseOrRoleIsConfigurationARefusedServerIsNot() throws {
        let conninfo = try TestDatabase.create(prefix: "pgcls")
        let missingDatabase = try #require(throws: PostgresError.self) {
            try PostgresConnection(conninfo: conninfo + " dbname=storerecon_no_such_db_\(UInt32.random(in: 0...9999))")
        }
        #expect(missingDatabase.isConfiguration, "\(missingDatabase)")
        let missingRole = try #require(throws: PostgresError.self) {
            try PostgresConnection(conninfo: conninfo + " user=no_such_role_\(UInt32.random(in: 0...9999))")
        }
        #expect(missingRole.isConfiguration, "\(missingRole)")
        let refused = try #require(throws: PostgresError.self) {
            try PostgresConnection(conninfo: "host=/nonexistent-\(UUID().uuidString) port=1 connect_timeout=2")
        }
        #expect(refused.code == .connectionFailed)
        #expect(refused.isRetryable)
        #expect(!refused.isConfiguration)
    }
}
