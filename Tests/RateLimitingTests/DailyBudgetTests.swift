import RateLimiting
import Testing

@Suite("DailyBudget")
struct DailyBudgetTests {
    static let day = PacificDay(year: 2026, month: 3, day: 8)

    @Test func theCapStopsEveryPurpose() throws {
        var budget = DailyBudget(day: Self.day, cap: 3, backfillCap: nil)
        for _ in 0..<3 {
            try budget.check(purpose: .incremental, app: "a", api: .googleVoidedPurchases)
            budget.record(purpose: .incremental)
        }
        let error = #expect(throws: QuotaError.self) {
            try budget.check(purpose: .incremental, app: "a", api: .googleVoidedPurchases)
        }
        #expect(error?.reason.contains("2026-03-08") == true)
        #expect(error?.app == "a")
        #expect(budget.refused == 1)
        #expect(budget.usage(api: .googleVoidedPurchases).exhausted)
    }

    @Test func aBackfillStopsAtItsShareAndLeavesTheRest() throws {
        var budget = DailyBudget(day: Self.day, cap: 10, backfillCap: 5)
        var backfills = 0
        while (try? budget.check(purpose: .backfill, app: "a", api: .googleVoidedPurchases)) != nil {
            budget.record(purpose: .backfill)
            backfills += 1
        }
        #expect(backfills == 5)
        var incrementals = 0
        while (try? budget.check(purpose: .incremental, app: "a", api: .googleVoidedPurchases)) != nil {
            budget.record(purpose: .incremental)
            incrementals += 1
        }
        #expect(incrementals == 5)
        let usage = budget.usage(api: .googleVoidedPurchases)
        #expect(usage.used == 10)
        #expect(usage.usedBackfill == 5)
        #expect(usage.heldBack == 2)
        #expect(usage.remaining == 0)
    }

    @Test func theStoresWordEndsTheDayWhateverTheCount() {
        var budget = DailyBudget(day: Self.day, cap: nil, backfillCap: nil)
        budget.markExhausted()
        #expect(throws: QuotaError.self) { try budget.check(purpose: .incremental, app: "a", api: .appleRefundHistory) }
        #expect(budget.usage(api: .appleRefundHistory).exhausted)
        #expect(budget.usage(api: .appleRefundHistory).remaining == 0)
    }

    @Test func noCapNeverRefuses() throws {
        var budget = DailyBudget(day: Self.day, cap: nil, backfillCap: nil)
        for _ in 0..<10_000 {
            try budget.check(purpose: .backfill, app: "a", api: .appleRefundHistory)
            budget.record(purpose: .backfill)
        }
        #expect(budget.usage(api: .appleRefundHistory).remaining == nil)
    }
}
