import Foundation
import Reconciler
import Testing

@Suite("VoidedWindowPlanner")
struct VoidedWindowPlannerTests {
    let planner = VoidedWindowPlanner(overlap: 3600, skew: 60)
    let now = Date(timeIntervalSince1970: 1_795_321_970)

    @Test func firstRunTakesTheWholeRetention() {
        let plan = planner.incremental(highWater: nil, now: now)
        #expect(plan.end == now.addingTimeInterval(-60))
        #expect(plan.start == VoidedWindowPlanner.oldestStart(now: now))
        #expect(plan.end.timeIntervalSince(plan.start) > 29.9 * 86_400)
        #expect(plan.gap == nil)
    }

    @Test func nextRunOverlapsThePreviousEnd() {
        let highWater = now.addingTimeInterval(-86_400)
        let plan = planner.incremental(highWater: highWater, now: now)
        #expect(plan.start == highWater.addingTimeInterval(-3600))
        #expect(plan.end == now.addingTimeInterval(-60))
        #expect(plan.gap == nil)
    }

    @Test func aCheckpointOlderThanRetentionIsAGap() throws {
        let highWater = now.addingTimeInterval(-40 * 86_400)
        let plan = planner.incremental(highWater: highWater, now: now)
        let gap = try #require(plan.gap)
        #expect(gap.from == highWater)
        #expect(gap.to == VoidedWindowPlanner.oldestStart(now: now))
        #expect(plan.start == gap.to)
    }

    @Test func anOverlapReachingPastRetentionIsNotAGap() {
        let highWater = VoidedWindowPlanner.oldestStart(now: now).addingTimeInterval(60)
        let plan = planner.incremental(highWater: highWater, now: now)
        #expect(plan.gap == nil)
        #expect(plan.start == VoidedWindowPlanner.oldestStart(now: now))
    }

    @Test func runsMinutesApartStillMakeAValidWindow() {
        let plan = planner.incremental(highWater: now.addingTimeInterval(-30), now: now)
        #expect(plan.start <= plan.end)
    }

    @Test func backfillIsClampedAndReportsTheLostPart() throws {
        let since = now.addingTimeInterval(-45 * 86_400)
        let plan = planner.backfill(since: since, until: now.addingTimeInterval(-10 * 86_400), now: now)
        #expect(try #require(plan.gap).from == since)
        #expect(plan.end == now.addingTimeInterval(-10 * 86_400))
        let future = planner.backfill(
            since: now.addingTimeInterval(-86_400), until: now.addingTimeInterval(86_400), now: now)
        #expect(future.end == now.addingTimeInterval(-60))
        #expect(future.gap == nil)
    }
}
