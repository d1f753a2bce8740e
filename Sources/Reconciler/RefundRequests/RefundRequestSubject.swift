import Foundation
import Postgres

/// An open request with what is known about it: the backend's facts and the ledger's figures.
struct RefundRequestSubject {
    var decisionCase: RefundRequestCase
    /// The facts and figures the decision used, as recorded (`refund_request.facts`).
    var factsJSON: Data?

    /// The subjects of one app's open requests, in order: the facts and the customers' earlier refunds in one round
    /// trip, Google's usage evidence (of the requests with facts) in one more.
    static func load(
        _ group: [OpenRefundRequest], store: RefundRequestStore, on connection: PostgresConnection
    ) throws -> [RefundRequestSubject] {
        guard let platform = group.first?.request.store else { return [] }
        precondition(group.allSatisfy { $0.request.store == platform }, "one store's requests")
        let found = try ConsumptionFactStore.factsAndPriorRefunds(
            for: group.map(\.request), platform: platform, appId: store.appId, on: connection)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        var subjects = zip(group, found).map { open, found in
            subject(
                open, facts: found.facts, priorRefunds: found.priorRefunds, firstPurchasedAt: found.firstPurchasedAt,
                encoder: encoder)
        }
        guard platform == .google else { return subjects }
        let withFacts = subjects.indices.filter { subjects[$0].decisionCase.facts != nil }
        let events = try ConsumptionUsageEventStore.events(
            forEach: withFacts.map { RefundRequestAnswerer.ids(group[$0]) }, on: connection)
        for (index, events) in zip(withFacts, events) { subjects[index].decisionCase.usageEvents = events }
        return subjects
    }

    /// One request's subject from what was loaded for it.
    static func subject(
        _ open: OpenRefundRequest, facts: ConsumptionFacts?, priorRefunds: Int, firstPurchasedAt: Date? = nil,
        encoder: JSONEncoder
    ) -> RefundRequestSubject {
        let request = open.request
        let first = [request.firstPurchasedAt, firstPurchasedAt].compactMap { $0 }.min()
        let figures = LedgerFigures(
            tenureDays: first.map { max(0, Int(request.receivedAt.timeIntervalSince($0) / 86_400)) },
            priorRefunds: priorRefunds, periodUsedMilli: periodUsed(request))
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
