import Testing

@testable import Postgres

/// libpq's connect messages (15's wording) sorted into "fix the settings" (exit 78) and "try later" (exit 75).
@Suite struct ConnectFailureCodeTests {
    @Test(arguments: [
        #"connection to server at "db" (10.0.0.5), port 5432 failed: SSL error: certificate verify failed"#,
        #"connection to server at "db" (10.0.0.5), port 5432 failed: server certificate for "x" does not match host name "db""#,
        #"connection to server at "db" (10.0.0.5), port 5432 failed: server does not support SSL, but SSL was required"#,
        #"connection to server at "db" (10.0.0.5), port 5432 failed: root certificate file "/etc/ca.pem" does not exist"#,
        #"connection to server on socket "/run/postgresql/.s.PGSQL.5432" failed: FATAL:  database "x" does not exist"#,
    ])
    func aSettingThatCannotWorkIsBadSettings(message: String) {
        #expect(PostgresConnection.connectFailureCode(message, parsable: true) == .badSettings)
    }

    @Test(arguments: [
        #"connection to server at "db" (10.0.0.5), port 5432 failed: Connection refused"#,
        #"connection to server at "db" (10.0.0.5), port 5432 failed: timeout expired"#,
        #"could not translate host name "db" to address: Temporary failure in name resolution"#,
        #"connection to server at "db" (10.0.0.5), port 5432 failed: FATAL:  the database system is starting up"#,
    ])
    func aFaultThatMayPassIsConnectionFailed(message: String) {
        #expect(PostgresConnection.connectFailureCode(message, parsable: true) == .connectionFailed)
    }
}
