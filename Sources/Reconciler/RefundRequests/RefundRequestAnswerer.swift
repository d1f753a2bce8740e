import AppStoreServerAPI
import Foundation
import Postgres
import RateLimiting

/// What a store said to an answer that reached it.
enum SendResult: Sendable {
    /// Taken.
    case answered
    /// Read and refused, with the store's error code: sending it again would not help.
    case refused(code: String, message: String)
}

/// Decides a store's open requests, nearest deadline first, and sends the answers that are due with `send`: the
/// part of the job both stores share.
struct RefundRequestAnswerer: Sendable {
    let requests: RefundRequestStore
    let decider: RefundRequestDecider
    /// Sends one body; throws when the call did not reach the store (the claim is released for the next run).
    let send: @Sendable (Data, OpenRefundRequest) async throws -> SendResult

    func answerOpen(in environment: JobEnvironment) async throws {
        let connection = environment.connection
        for open in try requests.open(limit: AppleRefundRequests.batch, now: environment.now(), on: connection) {
            try environment.checkShutdown()
            let now = environment.now()
            let subject = try RefundRequestSubject.load(open, store: requests, on: connection, now: now)
            let verdict = decider.decide(subject.decisionCase, now: now)
            let label = "request \(open.request.requestId) (transaction \(open.request.transactionId))"
            guard let body = verdict.body else {
                environment.counters.add("requests_\(verdict.answer?.rawValue ?? "no_answer")")
                if verdict.answer == .missed {
                    environment.logger.error("\(label): the deadline \(open.deadline) passed unanswered")
                }
                if !environment.dryRun {
                    try connection.transaction { connection in
                        try requests.record(verdict, facts: subject.factsJSON, id: open.id, on: connection)
                        // A request that will never be answered needs no usage evidence.
                        if open.request.store == .google, verdict.answer == .missed || verdict.answer == .notSupported {
                            try ConsumptionUsageEventStore.delete(ids: Self.ids(open), on: connection)
                        }
                    }
                }
                continue
            }
            let json = body.json
            if environment.dryRun {
                environment.logger.info(
                    "dry run: would answer \(label) with \(String(decoding: body.storedJSON, as: UTF8.self))")
                environment.counters.add("would_answer")
                continue
            }
            let facts = subject.factsJSON ?? Data("{}".utf8)
            guard try requests.claim(verdict, facts: facts, body: body.storedJSON, id: open.id, on: connection) else {
                continue
            }
            try await deliver(json, for: open, label: label, in: environment)
        }
    }

    /// Sends one claimed answer and records what the store said; a call that never reached the store releases the
    /// claim for the next run and stops the job.
    private func deliver(_ json: Data, for open: OpenRefundRequest, label: String, in environment: JobEnvironment)
        async throws
    {
        let result: SendResult
        do {
            result = try await send(json, open)
        } catch {
            try requests.release(id: open.id, on: environment.connection)
            throw error
        }
        let (answer, code): (RefundRequestAnswer, String?)
        switch result {
        case .answered: (answer, code) = (.answered, nil)
        case .refused(let refusal, _): (answer, code) = (.failed, refusal)
        }
        if open.request.store == .google {
            // The usage evidence (IP addresses, locations) goes in the transaction that records the answer.
            try environment.connection.transaction { connection in
                try requests.finish(id: open.id, answer: answer, errorCode: code, on: connection)
                try ConsumptionUsageEventStore.delete(ids: Self.ids(open), on: connection)
            }
        } else {
            // One statement: no transaction's BEGIN and COMMIT round trips around it.
            try requests.finish(id: open.id, answer: answer, errorCode: code, on: environment.connection)
        }
        switch result {
        case .answered:
            environment.counters.add("answered")
        case .refused(let code, let message):
            environment.counters.add("answers_failed")
            environment.logger.error("\(label): the store refused the answer (\(code)): \(message)")
        }
    }

    /// The ids a purchase's facts and usage events may be kept under.
    static func ids(_ open: OpenRefundRequest) -> [String] {
        [open.request.transactionId] + (open.request.originalId.map { [$0] } ?? [])
    }
}
