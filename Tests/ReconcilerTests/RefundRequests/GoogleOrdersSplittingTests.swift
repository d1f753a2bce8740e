import PlayDeveloperAPI
import Testing

@testable import Reconciler

/// Google refuses a whole `orders.batchget` when it does not know one id: the batch is asked again in halves, down
/// to single orders, so one unknown order among many costs a few calls, not one per order.
@Suite("Google orders read in halves")
struct GoogleOrdersSplittingTests {
    /// A store that knows every id but `unknown`, and counts the calls.
    actor Store {
        let unknown: Set<String>
        var batches: [[String]] = []
        var singles: [String] = []

        init(unknown: Set<String>) { self.unknown = unknown }

        func batch(_ ids: [String]) -> [String]? {
            batches.append(ids)
            return ids.contains(where: unknown.contains) ? nil : ids
        }

        func single(_ id: String) -> String? {
            singles.append(id)
            return unknown.contains(id) ? nil : id
        }
    }

    static func read(_ ids: [String], store: Store) async throws -> [String] {
        try await GoogleReviewOrders.readSplitting(
            ids[...], batch: { await store.batch($0) }, single: { await store.single($0) })
    }

    @Test func oneUnknownOrderAmongTwoHundredCostsAFewCallsAndTheOthersAreAllRead() async throws {
        let ids = (1...200).map { "GPA.\($0)" }
        let store = Store(unknown: ["GPA.77"])
        let found = try await Self.read(ids, store: store)
        #expect(Set(found) == Set(ids).subtracting(["GPA.77"]))
        #expect(found.count == 199)
        // Halving 200 down to the one: 8 levels, two calls each below the first, against 201 asking each alone.
        let calls = await store.batches.count + store.singles.count
        #expect(calls <= 1 + 2 * 8)
        let singles = await store.singles
        #expect(singles.contains("GPA.77"))
    }

    @Test func aKnownBatchIsOneCallAndASingleIdIsAskedAlone() async throws {
        let store = Store(unknown: [])
        #expect(try await Self.read(["a", "b", "c"], store: store) == ["a", "b", "c"])
        #expect(await store.batches == [["a", "b", "c"]])
        #expect(try await Self.read(["z"], store: store) == ["z"])
        #expect(await store.singles == ["z"])
        #expect(try await Self.read([], store: store).isEmpty)
        let unknown = Store(unknown: ["x", "y"])
        #expect(try await Self.read(["x", "y"], store: unknown).isEmpty)
        #expect(await unknown.singles == ["x", "y"])
    }

    /// An order whose answer does not decode (or that Google refuses or calls gone) is found by halving like an
    /// unknown one and left out, so the other reviews are answered; a throttled or failing Google is the run's error.
    @Test func anUnreadableOrderIsLeftOutAndAnOutageIsTheRunsError() async throws {
        func answer(_ ids: [String], bad: String, _ code: PlayAPIError.Code) throws -> [String] {
            if ids.contains(bad) { throw PlayAPIError(code, "order \(bad)") }
            return ids
        }
        let ids = (1...50).map { "GPA.\($0)" }
        for code in [PlayAPIError.Code.malformedResponse, .gone, .badRequest, .invalidArgument, .notFound] {
            var unreadable: [PlayAPIError.Code] = []
            let found = try await GoogleReviewOrders.readSplitting(
                ids[...],
                batch: { batch in
                    try await GoogleReviewOrders.unlessUnreadable { try answer(batch, bad: "GPA.9", code) }
                },
                single: { id in
                    try await GoogleReviewOrders.unlessUnreadable(onUnreadable: { unreadable.append($0.code) }) {
                        try answer([id], bad: "GPA.9", code).first
                    } ?? nil
                })
            #expect(Set(found) == Set(ids).subtracting(["GPA.9"]), "\(code)")
            #expect(unreadable == [code])
        }
        for code in [PlayAPIError.Code.serverError, .rateLimited, .dailyQuotaExhausted, .transport] {
            await #expect(throws: PlayAPIError.self, "\(code)") {
                try await GoogleReviewOrders.readSplitting(
                    ids[...],
                    batch: { batch in
                        try await GoogleReviewOrders.unlessUnreadable { try answer(batch, bad: "GPA.9", code) }
                    },
                    single: { id in
                        try await GoogleReviewOrders.unlessUnreadable { try answer([id], bad: "GPA.9", code).first }
                            ?? nil
                    })
            }
        }
    }
}
