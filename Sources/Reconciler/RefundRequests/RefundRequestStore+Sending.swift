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
        _ = try recordAndClaim(verdicts, [], on: connection)
    }

    /// Claims requests for sending in one statement: the rule, facts and body are committed before the calls, with
    /// `sending_since`, so that a crash after a call can never lead to a second one. Returns the ids claimed (not
    /// those another run has).
    public func claim(_ claims: [Claim], on connection: PostgresConnection) throws -> Set<Int64> {
        try recordAndClaim([], claims, on: connection)
    }

    /// Records what the store said to claimed sends, in one statement: `answered`, or `failed` with its error code.
    public func finish(_ finishes: [Finish], on connection: PostgresConnection) throws {
        try finishAndRelease(finishes, released: [], on: connection)
    }

    /// Releases claims whose calls never reached the store (quota, an outage): the next run sends them.
    public func release(ids: [Int64], on connection: PostgresConnection) throws {
        try finishAndRelease([], released: ids, on: connection)
    }
}
