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
                UPDATE refund_request r SET answer = v.answer, rule = v.rule, preference = v.preference,
                       facts = v.facts::jsonb, answered_at = CASE WHEN v.answer IS NULL THEN NULL ELSE now() END
                FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])
                    AS v(id, answer, rule, preference, facts)
                WHERE r.id = ANY ($2::bigint[]) AND r.id = v.id AND r.app_id = $1 AND r.sending_since IS NULL
            )
            UPDATE refund_request r SET sending_since = now(), rule = c.rule, preference = c.preference,
                   facts = c.facts::jsonb, body_sent = c.body::jsonb
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
    /// it, and the claims of those that did not (the next run sends them). An id is in one of the two lists.
    public func finishAndRelease(_ finishes: [Finish], released: [Int64], on connection: PostgresConnection) throws {
        guard !finishes.isEmpty || !released.isEmpty else { return }
        try connection.execute(
            """
            WITH released AS (
                UPDATE refund_request SET sending_since = NULL, body_sent = NULL
                WHERE app_id = $1 AND id = ANY ($5::bigint[])
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
            ])
    }
}
