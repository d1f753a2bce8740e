import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

extension UnreachedAnswerTests {
    /// A call without the store's answer (a timeout) may have reached the store, which keeps the first answer: the
    /// next run sends the same body again, and keeps the first decision's rule, facts and body on record, though the
    /// backend's facts changed in between. A call the store asked to be made later reached it without an answer
    /// being taken: the next run decides afresh.
    @Test func anAnswerWithoutTheStoresAnswerIsSentAgainAsItWas() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(2))
        defer { connection.close() }
        let (unreached, later) = (Requests.transaction(1), Requests.transaction(2))
        let environment = Requests().environment(connection)
        let sent = Mutex<[String: [Data]]>([:])
        func answerer(_ first: Bool, laterAgain: Bool = false) -> RefundRequestAnswerer {
            Requests().makeAnswerer { json, open in
                let id = open.request.transactionId
                sent.withLock { $0[id, default: []].append(json) }
                if laterAgain, id == unreached { return .later(code: "4040002", message: "Account not found.") }
                guard first else { return .answered }
                return id == unreached
                    ? .unreached(code: "transport", message: "timed out")
                    : .later(code: "4290000", message: "Rate limit exceeded.")
            }
        }
        try await answerer(true).answerOpen(in: environment)
        let recorded = try Self.record(unreached, connection)
        #expect(recorded.body != nil, "the body of a send without an answer is kept")

        // The backend's facts change before the next run: 80 % consumed instead of 25 %.
        let facts = ConsumptionFacts(
            customerConsented: true, deliveryStatus: .delivered, consumptionMilli: 80_000,
            sampleContentProvided: false, asOf: Requests.received.addingTimeInterval(-60))
        _ = try ConsumptionFactStore.upsert(
            [unreached, later].map { ConsumptionFactRow(platform: .apple, purchaseId: $0, facts: facts) },
            on: connection)
        // Sent again and asked to come later: the body keeps its place for the run after.
        try await answerer(false, laterAgain: true).answerOpen(in: environment)
        #expect(try Self.record(unreached, connection) == recorded)
        try await answerer(false).answerOpen(in: environment)

        let bodies = sent.withLock { $0 }
        let again = try #require(bodies[unreached])
        #expect(again.count == 3)
        #expect(try Self.object(again[0]) as NSDictionary == Self.object(again[2]) as NSDictionary, "the same body")
        #expect(try Self.object(again[2])["consumptionPercentage"] as? Int == 25_000)
        #expect(try Self.record(unreached, connection) == recorded, "the first decision stays on record")
        let decidedAgain = try #require(bodies[later])
        #expect(try Self.object(decidedAgain[1])["consumptionPercentage"] as? Int == 80_000)
        #expect(try Self.rows(connection).values.allSatisfy { $0.hasPrefix("answered ") })
    }

    /// Google: the earlier body as stored (its usage evidence counted, never kept) is sent with its own decision and
    /// this decision's usage evidence; without an earlier send, or past the deadline, the decision's own body.
    @Test func aGoogleBodySentAgainCarriesTheEarlierDecisionAndTodaysEvidence() throws {
        let stored =
            #"{"consumptionPercentageMilliunits": 40000, "consumptionUsageEventsSent": 1, "pendingRefundToken": "prt-1", "refundPreference": "DECLINE", "sampleContentProvided": false}"#
        let event = ConsumptionUsageEvent(
            consumptionTime: nil, ipAddress: "203.0.113.7", location: nil, obfuscatedAccountId: nil,
            obfuscatedProfileId: nil, consumptionItemDescription: nil)
        let decided = RefundAnswerBody.google(
            GoogleReviewRefundBody(
                pendingRefundToken: "prt-1", sampleContentProvided: true, refundPreference: "APPROVE",
                consumptionPercentageMilliunits: 90_000, consumptionUsageEvents: [event]))
        var request = Requests.request("g1", at: 0)
        request.store = .google
        var open = OpenRefundRequest(id: 1, request: request, deadline: request.deadline)
        let verdict = RefundRequestVerdict(answer: nil, rule: "default", preference: .grant, body: decided)
        #expect(RefundRequestAnswerer.toSend(open, verdict)?.json == decided.json)

        open.unconfirmedBody = Data(stored.utf8)
        let again = try #require(RefundRequestAnswerer.toSend(open, verdict))
        #expect(
            String(decoding: again.json, as: UTF8.self)
                == #"{"consumptionPercentageMilliunits":40000,"consumptionUsageEvents":[{"ipAddress":"203.0.113.7"}],"pendingRefundToken":"prt-1","refundPreference":"DECLINE","sampleContentProvided":false}"#
        )
        #expect(again.storedJSON == Data(stored.utf8))
        #expect(RefundRequestAnswerer.toSend(open, RefundRequestVerdict(answer: .missed)) == nil)
    }

    struct Recorded: Equatable {
        var body: String?
        var facts: String?
        var rule: String?
    }

    static func record(_ transactionId: String, _ connection: PostgresConnection) throws -> Recorded {
        let row = try connection.query(
            "SELECT body_sent::text AS body, facts::text AS facts, rule FROM refund_request WHERE transaction_id = $1",
            [transactionId])[0]
        return Recorded(
            body: try row.decodeIfPresent("body"), facts: try row.decodeIfPresent("facts"),
            rule: try row.decodeIfPresent("rule"))
    }

    static func object(_ json: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
    }
}
