import AppStoreServerAPI
import Foundation
import Postgres
import RateLimiting

extension AppleRefundRequests {
    /// Decides every open request, nearest deadline first, and sends the answers that are due.
    func answerOpen(in environment: JobEnvironment) async throws {
        let connection = environment.connection
        for open in try requests.open(limit: Self.batch, now: environment.now(), on: connection) {
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
                    try requests.record(verdict, facts: subject.factsJSON, id: open.id, on: connection)
                }
                continue
            }
            let json = body.json
            if environment.dryRun {
                environment.logger.info(
                    "dry run: would answer \(label) with \(String(decoding: json, as: UTF8.self))")
                environment.counters.add("would_answer")
                continue
            }
            guard
                try requests.claim(
                    verdict, facts: subject.factsJSON ?? Data("{}".utf8), body: json, id: open.id, on: connection)
            else { continue }
            try await send(json, for: open, label: label, in: environment)
        }
    }

    /// Sends one claimed answer and records what Apple said. A call that never reached Apple (quota, an outage
    /// after retries) releases the claim for the next run and stops the job; a refusal is recorded with its code.
    private func send(_ json: Data, for open: OpenRefundRequest, label: String, in environment: JobEnvironment)
        async throws
    {
        let connection = environment.connection
        do {
            try await access.client.sendConsumptionInformation(transactionId: open.request.transactionId, body: json)
            try requests.finish(id: open.id, answer: .answered, errorCode: nil, on: connection)
            environment.counters.add("answered")
        } catch let error as AppStoreServerAPIError where Self.isRefusal(error) {
            let code = error.apiErrorCode.map { String($0.rawValue) } ?? "http_\(error.httpStatus ?? 0)"
            try requests.finish(id: open.id, answer: .failed, errorCode: code, on: connection)
            environment.counters.add("answers_failed")
            environment.logger.error("\(label): Apple refused the answer (\(code)): \(error.message)")
        } catch {
            try requests.release(id: open.id, on: connection)
            throw error
        }
    }

    /// A 4xx other than 401 and 429: Apple read the answer and refused it (sending it again would not help).
    static func isRefusal(_ error: AppStoreServerAPIError) -> Bool {
        guard let status = error.httpStatus else { return false }
        return (400..<500).contains(status) && status != 401 && status != 429
    }
}

/// An open request with what is known about it: the backend's facts and the ledger's figures.
struct RefundRequestSubject {
    var decisionCase: RefundRequestCase
    /// The facts and figures the decision used, as recorded (`refund_request.facts`).
    var factsJSON: Data?

    static func load(
        _ open: OpenRefundRequest, store: RefundRequestStore, on connection: PostgresConnection, now: Date
    ) throws -> RefundRequestSubject {
        let request = open.request
        let ids = [request.transactionId] + (request.originalId.map { [$0] } ?? [])
        let facts = try ConsumptionFactStore.facts(platform: request.store, ids: ids, on: connection)
        let figures = LedgerFigures(
            tenureDays: request.firstPurchasedAt.map { max(0, Int(request.receivedAt.timeIntervalSince($0) / 86_400)) },
            priorRefunds: try store.priorRefunds(
                originalId: request.originalId, transactionId: request.transactionId, on: connection),
            periodUsedMilli: periodUsed(request))
        let kind =
            request.store == .apple
            ? PurchaseKind(appleType: request.productType)
            : (request.productType == "subscription" ? .autoRenewable : .consumable)
        let decisionCase = RefundRequestCase(
            store: request.store, productId: request.productId, country: request.country, kind: kind,
            familyShared: request.familyShared, deadline: open.deadline, facts: facts, figures: figures,
            pendingToken: request.pendingToken)
        var json: Data?
        if facts != nil || figures.tenureDays != nil {
            struct Recorded: Encodable {
                var facts: ConsumptionFacts?
                var figures: LedgerFigures
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            encoder.dateEncodingStrategy = .iso8601
            json = try? encoder.encode(Recorded(facts: facts, figures: figures))
        }
        return RefundRequestSubject(decisionCase: decisionCase, factsJSON: json)
    }

    /// The share of the subscription period used when the request came, milliunits.
    static func periodUsed(_ request: NewRefundRequest) -> Int? {
        guard let start = request.purchasedAt, let end = request.expiresAt, end > start else { return nil }
        let share = request.receivedAt.timeIntervalSince(start) / end.timeIntervalSince(start)
        return Int((min(1, max(0, share)) * 100_000).rounded())
    }
}
