import Foundation
import Postgres

/// The statements around the sends: claims before the calls and what the store said after them, one statement
/// for a group of answers.
extension RefundRequestStore {
    /// One answer to claim: the rule, facts and body recorded with it.
    public struct Claim: Sendable, Equatable {
        /// `refund_request.id`.
        public var id: Int64
        /// The verdict that sends `body`.
        public var verdict: RefundRequestVerdict
        /// The facts and figures used (JSON).
        public var facts: Data
        /// The body as recorded (JSON).
        public var body: Data

        /// Creates a claim.
        public init(id: Int64, verdict: RefundRequestVerdict, facts: Data, body: Data) {
            self.id = id
            self.verdict = verdict
            self.facts = facts
            self.body = body
        }
    }

    /// A verdict that sends nothing (`missed`, `no_facts`, `no_consent`, `not_supported`, or a `no_answer` rule with
    /// the answer still open), with the facts it used.
    public struct Silent: Sendable, Equatable {
        /// `refund_request.id`.
        public var id: Int64
        /// The verdict.
        public var verdict: RefundRequestVerdict
        /// The facts and figures used (JSON), when there were any.
        public var facts: Data?

        /// Creates a verdict to record.
        public init(id: Int64, verdict: RefundRequestVerdict, facts: Data?) {
            self.id = id
            self.verdict = verdict
            self.facts = facts
        }
    }

    /// What the store said to one claimed send.
    public struct Finish: Sendable, Equatable {
        /// `refund_request.id`.
        public var id: Int64
        /// `answered`, or `failed` when the store refused it.
        public var answer: RefundRequestAnswer
        /// The store's error code of a refusal.
        public var errorCode: String?

        /// Creates a finish.
        public init(id: Int64, answer: RefundRequestAnswer, errorCode: String? = nil) {
            self.id = id
            self.answer = answer
            self.errorCode = errorCode
        }
    }

    /// Records verdicts that send nothing, in one statement (a request claimed meanwhile is left as it is).
    public func record(_ verdicts: [Silent], on connection: PostgresConnection) throws {
        guard !verdicts.isEmpty else { return }
        try connection.execute(
            """
            UPDATE refund_request r SET answer = v.answer, rule = v.rule, preference = v.preference,
                   facts = v.facts::jsonb, answered_at = CASE WHEN v.answer IS NULL THEN NULL ELSE now() END
            FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])
                AS v(id, answer, rule, preference, facts)
            WHERE r.id = ANY ($2::bigint[]) AND r.id = v.id AND r.app_id = $1 AND r.sending_since IS NULL
            """,
            [
                appId, PostgresArray(verdicts.map(\.id)),
                PostgresNullableTextArray(verdicts.map { $0.verdict.answer?.rawValue }),
                PostgresNullableTextArray(verdicts.map(\.verdict.rule)),
                PostgresNullableTextArray(verdicts.map { $0.verdict.preference?.rawValue }),
                PostgresNullableTextArray(verdicts.map { $0.facts.map { String(decoding: $0, as: UTF8.self) } }),
            ])
    }

    /// Claims requests for sending in one statement: the rule, facts and body are committed before the calls, with
    /// `sending_since`, so that a crash after a call can never lead to a second one. Returns the ids claimed (not
    /// those another run has).
    public func claim(_ claims: [Claim], on connection: PostgresConnection) throws -> Set<Int64> {
        guard !claims.isEmpty else { return [] }
        let rows = try connection.query(
            """
            UPDATE refund_request r SET sending_since = now(), rule = c.rule, preference = c.preference,
                   facts = c.facts::jsonb, body_sent = c.body::jsonb
            FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])
                AS c(id, rule, preference, facts, body)
            -- `= ANY` as well: the rows by their primary key, not a scan of the app's requests joined to the list.
            WHERE r.id = ANY ($2::bigint[]) AND r.id = c.id AND r.app_id = $1 AND r.sending_since IS NULL
              AND (r.answer IS NULL OR r.answer IN ('no_facts', 'no_consent'))
            RETURNING r.id
            """,
            [
                appId, PostgresArray(claims.map(\.id)), PostgresNullableTextArray(claims.map(\.verdict.rule)),
                PostgresNullableTextArray(claims.map { $0.verdict.preference?.rawValue }),
                PostgresTextArray(claims.map { String(decoding: $0.facts, as: UTF8.self) }),
                PostgresTextArray(claims.map { String(decoding: $0.body, as: UTF8.self) }),
            ])
        return Set(try rows.map { try $0.decode("id", as: Int64.self) })
    }

    /// Records what the store said to claimed sends, in one statement: `answered`, or `failed` with its error code.
    public func finish(_ finishes: [Finish], on connection: PostgresConnection) throws {
        guard !finishes.isEmpty else { return }
        try connection.execute(
            """
            UPDATE refund_request r SET answer = f.answer, error_code = f.code, answered_at = now(),
                   decision = CASE WHEN f.answer = 'answered' THEN COALESCE(r.decision, 'pending') ELSE r.decision END
            FROM unnest($2::bigint[], $3::text[], $4::text[]) AS f(id, answer, code)
            WHERE r.id = ANY ($2::bigint[]) AND r.id = f.id AND r.app_id = $1
            """,
            [
                appId, PostgresArray(finishes.map(\.id)), PostgresTextArray(finishes.map(\.answer.rawValue)),
                PostgresNullableTextArray(finishes.map(\.errorCode)),
            ])
    }

    /// Releases claims whose calls never reached the store (quota, an outage): the next run sends them.
    public func release(ids: [Int64], on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        try connection.execute(
            """
            UPDATE refund_request SET sending_since = NULL, body_sent = NULL
            WHERE app_id = $1 AND id = ANY($2::bigint[]) AND (answer IS NULL OR answer IN ('no_facts', 'no_consent'))
            """, [appId, PostgresArray(ids)])
    }
}
