import Testing

@testable import Reconciler

/// ``SideBySideSchedule`` without I/O: the paced apps start first and all at once; the others wait until every
/// running paced app is warm (its first answers sent, or ended), then run up to their bound while paced ones run,
/// then take every free slot.
@Suite("SideBySideSchedule")
struct SideBySideScheduleTests {
    @Test func pacedAppsStartFirstAndTheOthersFillTheGaps() {
        // Apps 0, 2, 4 paced; 1, 3, 5, 6 not; 5 slots; 2 unpaced at once once the paced ones are warm.
        var schedule = SideBySideSchedule(
            paced: [true, false, true, false, true, false, false], limit: 5, unpacedWhileWarming: 0,
            unpacedWhilePaced: 2)
        #expect(schedule.start() == [0, 2, 4])
        for index in [0, 2, 4] { schedule.warm(index) }
        #expect(schedule.start() == [1, 3])
        schedule.ended(1)
        #expect(schedule.start() == [5], "an unpaced app's slot goes to the next unpaced app")
        schedule.ended(0)
        #expect(schedule.start().isEmpty, "two unpaced apps run while paced ones do")
        schedule.ended(2)
        schedule.ended(4)
        #expect(schedule.start() == [6], "no paced app left: every free slot")
        schedule.ended(3)
        #expect(schedule.start().isEmpty)
    }

    @Test func unpacedAppsWaitUntilEveryRunningPacedAppIsWarmThenTakeTheirBound() {
        // Apps 0, 1 paced; 2...7 not; 8 slots; none while warming, then 4.
        var schedule = SideBySideSchedule(
            paced: [true, true] + Array(repeating: false, count: 6), limit: 8, unpacedWhileWarming: 0,
            unpacedWhilePaced: 4)
        #expect(schedule.start() == [0, 1])
        schedule.warm(0)
        #expect(schedule.start().isEmpty, "app 1 is still cold")
        schedule.warm(0)
        #expect(schedule.start().isEmpty, "a second report of a warm app changes nothing")
        schedule.warm(1)
        #expect(schedule.start() == [2, 3, 4, 5], "both warm: up to 4 unpaced, more than one per core")
        schedule.warm(3)
        #expect(schedule.start().isEmpty, "an unpaced app's report changes nothing")
        schedule.ended(2)
        #expect(schedule.start() == [6])
        schedule.ended(0)
        schedule.ended(1)
        #expect(schedule.start() == [7], "no paced app left: every free slot")
    }

    @Test func aPacedAppThatEndsColdCountsAsWarmAndOneUnpacedMayRunWhileWarming() {
        var schedule = SideBySideSchedule(
            paced: [true, true, false, false, false], limit: 5, unpacedWhileWarming: 1, unpacedWhilePaced: 2)
        #expect(schedule.start() == [0, 1, 2], "one unpaced app while the paced ones warm up")
        schedule.ended(2)
        #expect(schedule.start() == [3])
        schedule.ended(0)
        #expect(schedule.start().isEmpty, "app 0 ended without a report, app 1 is still cold")
        schedule.warm(1)
        #expect(schedule.start() == [4])
    }

    @Test func withEveryAppPacedItIsTheOrderGivenWithinTheLimit() {
        var schedule = SideBySideSchedule(
            paced: [true, true, true], limit: 2, unpacedWhileWarming: 0, unpacedWhilePaced: 1)
        #expect(schedule.start() == [0, 1])
        schedule.ended(1)
        #expect(schedule.start() == [2])
        let none = SideBySideSchedule(paced: [], limit: 4, unpacedWhileWarming: 0, unpacedWhilePaced: 2)
        var empty = none
        #expect(empty.start().isEmpty)
    }

    @Test func aPacedAppWaitingTakesTheNextFreeSlotBeforeAnyOther() {
        var schedule = SideBySideSchedule(
            paced: [false, true, true], limit: 1, unpacedWhileWarming: 0, unpacedWhilePaced: 1)
        #expect(schedule.start() == [1])
        schedule.ended(1)
        #expect(schedule.start() == [2])
        schedule.warm(2)
        #expect(schedule.start().isEmpty, "the only slot is taken")
        schedule.ended(2)
        #expect(schedule.start() == [0])
    }

    @Test func theBoundsOfARunGrowWithTheCores() {
        let schedule = SideBySideSchedule(paced: [true, false], limit: 40, cores: 2)
        #expect(schedule.unpacedWhileWarming == 0)
        #expect(schedule.unpacedWhilePaced == 2 * SideBySideSchedule.unpacedPerCore)
        let eight = SideBySideSchedule(paced: [], limit: 40, cores: 8)
        #expect(eight.unpacedWhilePaced == 8 * SideBySideSchedule.unpacedPerCore)
    }
}
