import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

extension NoAnswerRuleTests {
    /// The refund-requests job stopped running: nothing records its requests `missed`, yet `status` and the metrics
    /// count each one left undecided past its deadline (it would otherwise drop out of both at the deadline). One
    /// still without the backend's facts at its deadline was not answered either (the store decided without
    /// storerecon's word): the job leaves it `no_facts`, as the report counts it, and `status` counts it missed.
    @Test(arguments: [nil, "no_facts"] as [String?])
    func aRequestLeftUnansweredPastItsDeadlineIsCountedAsMissed(answer: String?) async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(2))
        defer { connection.close() }
        if let answer {
            try connection.execute(
                "UPDATE refund_request SET answer = $1, answered_at = $2", [answer, Requests.received])
        }
        let soon = Requests.received.addingTimeInterval(11 * 3600)
        var app = StatusReport.AppStatus(
            id: "ios", platform: "apple", storeAppId: "com.ios", subscriptions: 0, refunds: 0)
        var attention: [String] = []
        try StatusReport.gatherRefundRequests(into: &app, attention: &attention, now: soon, on: connection)
        #expect(app.refundRequests?.waiting == 2 && app.refundRequests?.missedLastDay == 0)
        #expect(attention.count == 1 && attention[0].contains("before its deadline"), "\(attention)")

        let late = Requests.received.addingTimeInterval(13 * 3600)
        attention = []
        try StatusReport.gatherRefundRequests(into: &app, attention: &attention, now: late, on: connection)
        #expect(app.refundRequests?.waiting == 0 && app.refundRequests?.missedLastDay == 2)
        #expect(attention == ["ios: 2 refund requests missed their deadline in the last day"])
        #expect(try RefundRequestStatus.all(now: late, on: connection).map(\.status.missedLastDay) == [2])
        // A day after the deadline they are no longer "in the last day".
        let later = Requests.received.addingTimeInterval(38 * 3600)
        #expect(try RefundRequestStatus.all(now: later, on: connection).map(\.status.missedLastDay) == [0])
        // Without consent they wait for nothing an operator can give: not counted.
        try connection.execute("UPDATE refund_request SET answer = 'no_consent'")
        #expect(try RefundRequestStatus.all(now: late, on: connection).map(\.status.missedLastDay) == [0])
    }
}

extension NoAnswerRuleTests {
    /// After an outage the job records at once the requests whose deadlines passed meanwhile, days ago: `status` and
    /// the metrics count them for the day after they were recorded, not by their deadline (which would never count
    /// them).
    @Test func requestsRecordedMissedAfterAnOutageAreCountedForADay() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(2))
        defer { connection.close() }
        let recorded = Requests.received.addingTimeInterval(5 * 86_400)
        try connection.execute("UPDATE refund_request SET answer = 'missed', answered_at = $1", [recorded])
        var app = StatusReport.AppStatus(
            id: "ios", platform: "apple", storeAppId: "com.ios", subscriptions: 0, refunds: 0)
        var attention: [String] = []
        let now = recorded.addingTimeInterval(3600)
        try StatusReport.gatherRefundRequests(into: &app, attention: &attention, now: now, on: connection)
        #expect(app.refundRequests?.waiting == 0 && app.refundRequests?.missedLastDay == 2)
        #expect(attention == ["ios: 2 refund requests missed their deadline in the last day"])
        #expect(try RefundRequestStatus.all(now: now, on: connection).map(\.status.missedLastDay) == [2])
        let dayLater = recorded.addingTimeInterval(86_400 + 60)
        #expect(try RefundRequestStatus.all(now: dayLater, on: connection).map(\.status.missedLastDay) == [0])
    }
}
