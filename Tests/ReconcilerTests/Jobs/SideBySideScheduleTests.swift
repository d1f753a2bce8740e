import Testing

@testable import Reconciler

/// ``SideBySideSchedule`` without I/O: the paced apps start first and all at once; the others fill the gaps, at most
/// one per core while a paced app runs, then every free slot.
@Suite("SideBySideSchedule")
struct SideBySideScheduleTests {
    @Test func pacedAppsStartFirstAndTheOthersFillTheGaps() {
        // Apps 0, 2, 4 paced; 1, 3, 5, 6 not; 5 slots, 2 cores.
        var schedule = SideBySideSchedule(
            paced: [true, false, true, false, true, false, false], limit: 5, unpacedWhilePaced: 2)
        #expect(schedule.start() == [0, 2, 4, 1, 3])
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

    @Test func withEveryAppPacedItIsTheOrderGivenWithinTheLimit() {
        var schedule = SideBySideSchedule(paced: [true, true, true], limit: 2, unpacedWhilePaced: 1)
        #expect(schedule.start() == [0, 1])
        schedule.ended(1)
        #expect(schedule.start() == [2])
        let none = SideBySideSchedule(paced: [], limit: 4, unpacedWhilePaced: 2)
        var empty = none
        #expect(empty.start().isEmpty)
    }

    @Test func aPacedAppWaitingTakesTheNextFreeSlotBeforeAnyOther() {
        var schedule = SideBySideSchedule(paced: [false, true, true], limit: 1, unpacedWhilePaced: 1)
        #expect(schedule.start() == [1])
        schedule.ended(1)
        #expect(schedule.start() == [2])
        schedule.ended(2)
        #expect(schedule.start() == [0])
    }
}
