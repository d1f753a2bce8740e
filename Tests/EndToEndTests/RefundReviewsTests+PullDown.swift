import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

extension RefundReviewsTests {
    /// Pub/Sub refusing the pull (here its "per day" answer) does not keep the reviews already stored from their
    /// answers: they are sent, then the run ends with the pull's error (it used to end before answering any, and
    /// the reviews passed their 24 hours).
    @Test func aFailingPullStillAnswersTheReviewsStoredBefore() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let (stores, _) = try configured(simulator, databasePrefix: "reviewspulldown")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }

            // The reviews are stored (their acknowledgement refused), then the backend's facts loaded.
            #expect(try await run(stores, ["run", "refund-requests"]).status != 0)
            let found = try reviews(connection)
            try #require(found.count == 12)
            let facts = stores.directory.appendingPathComponent("facts.csv").path
            try factsCSV(found).write(toFile: facts, atomically: true, encoding: .utf8)
            #expect(try await run(stores, ["import", "consumption", facts]).status == 0)

            simulator.setFaults(FaultSettings(rates: [.dailyLimit: 1]), for: .googlePubSub)
            let second = try await run(stores, ["run", "refund-requests"])
            #expect(second.status == 75, "\(second.stderr.suffix(2000))")
            #expect(second.stderr.contains("reading the RTDN subscription failed"), "\(second.stderr.suffix(2000))")
            let sent = Dictionary(uniqueKeysWithValues: simulator.refundReviewAnswers().map { ($0.orderId, $0) })
            let expected = found.enumerated().compactMap { expectedBody($0.offset, $0.element) }
            #expect(!expected.isEmpty)
            #expect(sent.count == expected.count)
            for (index, review) in found.enumerated() {
                #expect(sent[review.orderId]?.body == expectedBody(index, review), "review \(index)")
            }
        }
    }
}
