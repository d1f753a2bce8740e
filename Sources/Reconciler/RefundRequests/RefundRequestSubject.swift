import Foundation
import Postgres

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
        let customer = ConsumptionFactStore.RefundCustomer(
            appId: store.appId, originalId: request.originalId, transactionId: request.transactionId)
        let (facts, prior) = try ConsumptionFactStore.factsAndPriorRefunds(
            platform: request.store, ids: ids, customer: customer, on: connection)
        let figures = LedgerFigures(
            tenureDays: request.firstPurchasedAt.map { max(0, Int(request.receivedAt.timeIntervalSince($0) / 86_400)) },
            priorRefunds: prior, periodUsedMilli: periodUsed(request))
        let kind =
            request.store == .apple
            ? PurchaseKind(appleType: request.productType)
            : (request.productType == "subscription" ? .autoRenewable : .consumable)
        var decisionCase = RefundRequestCase(
            store: request.store, productId: request.productId, country: request.country, kind: kind,
            familyShared: request.familyShared, deadline: open.deadline, facts: facts, figures: figures,
            pendingToken: request.pendingToken)
        if request.store == .google, facts != nil {
            decisionCase.usageEvents = try ConsumptionUsageEventStore.events(ids: ids, on: connection)
        }
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
