import Foundation
import Postgres

/// The statements of a group's two transactions, each in one statement: a statement is atomic by itself, so the
/// answer loop needs no BEGIN and COMMIT around it, and a group costs two round trips instead of six or more.
extension RefundRequestStore {
    /// ``record(_:on:)`` and ``claim(_:on:)`` in one statement: the verdicts that send nothing and the claims of a
    /// group, committed together before any call. A request is in `verdicts` or in `claims`, never in both (one
    /// statement updates a row once). Returns the ids claimed (not those another run has).
    public func recordAndClaim(_ verdicts: [Silent], _ claims: [Claim], on connection: PostgresConnection) throws
        -> Set<Int64>
    {
        guard !verdicts.isEmpty || !claims.isEmpty else { return [] }
        let rows = try connection.query(
            """
            WITH recorded AS (
                UPDATE refund_request r SET answer = v.answer,
                       rule = CASE WHEN v.answer = 'missed' AND r.body_sent IS NOT NULL THEN r.rule ELSE v.rule END,
                       preference = CASE WHEN v.answer = 'missed' AND r.body_sent IS NOT NULL THEN r.preference
                                         ELSE v.preference END,
                       facts = CASE WHEN v.answer = 'missed' AND r.body_sent IS NOT NULL THEN r.facts
                                    ELSE v.facts::jsonb END,
                       answered_at = CASE WHEN v.answer IS NULL THEN NULL ELSE now() END,
                       -- Missed after a send without an answer: the body that may have reached the store stays.
                       body_sent = CASE WHEN v.answer = 'missed' THEN r.body_sent END
                FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])
                    AS v(id, answer, rule, preference, facts)
                WHERE r.id = ANY ($2::bigint[]) AND r.id = v.id AND r.app_id = $1 AND r.sending_since IS NULL
            )
            -- A send that had no answer keeps its decision: its body is sent again as it was.
            UPDATE refund_request r SET sending_since = now(),
                   rule = CASE WHEN r.body_sent IS NULL THEN c.rule ELSE r.rule END,
                   preference = CASE WHEN r.body_sent IS NULL THEN c.preference ELSE r.preference END,
                   facts = CASE WHEN r.body_sent IS NULL THEN c.facts::jsonb ELSE r.facts END,
                   body_sent = coalesce(r.body_sent, c.body::jsonb)
            FROM unnest($7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[])
                AS c(id, rule, preference, facts, body)
            WHERE r.id = ANY ($7::bigint[]) AND r.id = c.id AND r.app_id = $1 AND r.sending_since IS NULL
              AND (r.answer IS NULL OR r.answer IN ('no_facts', 'no_consent'))
            RETURNING r.id
            """,
            [
                appId, PostgresArray(verdicts.map(\.id)),
                PostgresNullableTextArray(verdicts.map { $0.verdict.answer?.rawValue }),
                PostgresNullableTextArray(verdicts.map(\.verdict.rule)),
                PostgresNullableTextArray(verdicts.map { $0.verdict.preference?.rawValue }),
                PostgresNullableTextArray(verdicts.map { $0.facts.map { String(decoding: $0, as: UTF8.self) } }),
                PostgresArray(claims.map(\.id)), PostgresNullableTextArray(claims.map(\.verdict.rule)),
                PostgresNullableTextArray(claims.map { $0.verdict.preference?.rawValue }),
                PostgresTextArray(claims.map { String(decoding: $0.facts, as: UTF8.self) }),
                PostgresTextArray(claims.map { String(decoding: $0.body, as: UTF8.self) }),
            ])
        return Set(try rows.map { try $0.decode("id", as: Int64.self) })
    }

    /// ``finish(_:on:)`` and ``release(ids:on:)`` in one statement: what the store said to the sends that reached
    /// it, and the claims of those that did not (the next run sends them). The sends in `unconfirmed` had no answer
    /// (a timeout, a server error) and may have reached the store: released with their body, which the next run
    /// sends again as it is (``OpenRefundRequest/unconfirmedBody``). An id is in one of the three lists.
    public func finishAndRelease(
        _ finishes: [Finish], released: [Int64], unconfirmed: [Int64] = [], on connection: PostgresConnection
    ) throws {
        guard !finishes.isEmpty || !released.isEmpty || !unconfirmed.isEmpty else { return }
        try connection.execute(
            """
            WITH released AS (
                UPDATE refund_request SET sending_since = NULL,
                       body_sent = CASE WHEN id = ANY ($6::bigint[]) THEN body_sent END
                WHERE app_id = $1 AND (id = ANY ($5::bigint[]) OR id = ANY ($6::bigint[]))
                  AND (answer IS NULL OR answer IN ('no_facts', 'no_consent'))
            )
            UPDATE refund_request r SET answer = f.answer, error_code = f.code, answered_at = now(),
                   body_sent = CASE WHEN f.answer = 'missed' THEN NULL ELSE r.body_sent END,
                   decision = CASE WHEN f.answer = 'answered' THEN COALESCE(r.decision, 'pending') ELSE r.decision END
            FROM unnest($2::bigint[], $3::text[], $4::text[]) AS f(id, answer, code)
            WHERE r.id = ANY ($2::bigint[]) AND r.id = f.id AND r.app_id = $1
            """,
            [
                appId, PostgresArray(finishes.map(\.id)), PostgresTextArray(finishes.map(\.answer.rawValue)),
                PostgresNullableTextArray(finishes.map(\.errorCode)), PostgresArray(released),
                PostgresArray(unconfirmed),
            ])
    }
}
