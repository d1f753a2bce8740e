import Foundation
import RateLimiting
import StoreHTTP
import Testing

/// Pacing one process's calls by when their answers came back (the store counts arrivals, which come no later than
/// the answers): pure tests on a manual clock, and the Postgres gate's use of it, which never reaches the database.
@Suite("ArrivalPacer")
struct ArrivalPacerTests {
    typealias Instant = ManualClock.Instant
    static let limit = RateLimit(3, per: .seconds(1), margin: .milliseconds(25))

    static func at(_ milliseconds: Int) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    @Test func theCallACountAfterWaitsForTheAnswerOfTheFirstPlusTheWindow() {
        var pacer = ArrivalPacer<Instant>(windows: [Self.limit])
        for (sent, answered) in [(0, 300), (10, 20), (30, 40)] {
            #expect(pacer.wait(at: Self.at(sent)) == .none)
            pacer.started()
            pacer.finished(at: Self.at(answered))
        }
        // Granted at 0, its answer came back at 300 ms: it may have reached the store as late as that, so the
        // fourth call waits for the window after the oldest of the three answers (20 ms), not after the grant; the
        // window is the store's second and 5 ms for the clocks, not the grant's 25 ms latency margin.
        #expect(pacer.wait(at: Self.at(500)) == .until(Self.at(1025)))
        #expect(pacer.wait(at: Self.at(1025)) == .none)
    }

    @Test func aCallInFlightCountsAsArrivingAnyMoment() {
        var pacer = ArrivalPacer<Instant>(windows: [Self.limit])
        pacer.started()
        pacer.finished(at: Self.at(0))
        pacer.started()
        pacer.started()
        // Two in flight and one answered at 0: the next waits for the window after that answer.
        #expect(pacer.wait(at: Self.at(100)) == .until(Self.at(1005)))
        pacer.started()
        // Three in flight: only an answer can free a place.
        #expect(pacer.wait(at: Self.at(5000)) == .answer)
        pacer.finished(at: Self.at(5000))
        #expect(pacer.inFlight == 2)
        #expect(pacer.wait(at: Self.at(5000)) == .until(Self.at(6005)))
    }

    @Test func answersOutOfOrderAreKeptInOrderAndTheTightestWindowDecides() {
        let windows = [Self.limit, RateLimit(4, per: .seconds(10), margin: .zero)]
        var pacer = ArrivalPacer<Instant>(windows: windows)
        for answered in [400, 100, 300, 200] {
            pacer.started()
            pacer.finished(at: Self.at(answered))
        }
        // 3 in 1 s: the third latest answer (200) + 1.005 s; 4 in 10 s: the fourth latest (100) + 10.05 s decides.
        #expect(pacer.wait(at: Self.at(500)) == .until(Self.at(10_150)))
        #expect(ArrivalPacer<Instant>(windows: []).wait(at: Self.at(0)) == .none)
    }

    @Test func thePostgresGatePacesByAnswersWithoutTheDatabase() async throws {
        let clock = ManualClock()
        let api = StoreAPI.appleConsumption
        let policy = QuotaPolicy(defaultLimits: QuotaLimits([api: QuotaLimit(windows: [Self.limit])]))
        // Never connects: pacing is this process's own.
        let gate = PostgresQuotaGate(conninfo: "host=/nonexistent", policy: policy, clock: clock)
        for _ in 0..<3 {
            try await gate.beginCall(app: "a", api: api)
            clock.advance(by: .milliseconds(100))
            await gate.endCall(app: "a", api: api)
        }
        #expect(clock.now == Self.at(300))
        try await gate.beginCall(app: "a", api: api)
        // The first answer came back at 100 ms: the fourth call was asked for 1.005 s after it.
        #expect(clock.now == Self.at(1105))
        #expect(gate.statistics.paced == 1)
        // Another app's calls are paced on their own.
        try await gate.beginCall(app: "b", api: api)
        #expect(clock.now == Self.at(1105))
        // An API counted in short windows (its calls leave within their grant's margin) is not paced by answers.
        let google = PostgresQuotaGate(
            conninfo: "host=/nonexistent",
            policy: QuotaPolicy(
                defaultLimits: QuotaLimits([.googleVoidedPurchases: QuotaLimit(windows: [Self.limit])])),
            clock: clock)
        for _ in 0..<5 { try await google.beginCall(app: "a", api: .googleVoidedPurchases) }
        #expect(clock.now == Self.at(1105))
        #expect(google.statistics.paced == 0)
    }

    @Test func anAnswerIsCountedWhenTheTransportSawItNotWhenTheCallerResumed() async throws {
        let clock = ManualClock()
        let api = StoreAPI.appleConsumption
        let policy = QuotaPolicy(defaultLimits: QuotaLimits([api: QuotaLimit(windows: [Self.limit])]))
        let gate = PostgresQuotaGate(conninfo: "host=/nonexistent", policy: policy, clock: clock)
        for _ in 0..<3 { try await gate.beginCall(app: "a", api: api) }
        clock.advance(by: .milliseconds(400))
        // The transport saw the answers 300 ms before their callers got to say so.
        for _ in 0..<3 { await gate.endCall(app: "a", api: api, answeredAgo: .milliseconds(300)) }
        try await gate.beginCall(app: "a", api: api)
        // The first answer came back at 100 ms (not 400): the fourth call was asked for 1.005 s after that.
        #expect(clock.now == Self.at(1105))
    }

    /// Records the order in which `sendGranted` uses the gate.
    actor RecordingGate: QuotaGate {
        var events: [String] = []

        func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
            events.append("acquire")
            return nil
        }

        func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {}

        func beginCall(app: String, api: StoreAPI) async throws { events.append("begin") }

        func endCall(app: String, api: StoreAPI, answeredAgo: Duration) async {
            events.append(answeredAgo >= .milliseconds(250) ? "end earlier" : "end")
        }

        func note(_ event: String) { events.append(event) }
    }

    @Test func sendGrantedBracketsEveryCallAndItsLateRetakesWithBeginAndEnd() async throws {
        let gate = RecordingGate()
        var sends = 0
        _ = try await gate.sendGranted(app: "a", api: .appleConsumption, purpose: .incremental) { _ in
            sends += 1
            await gate.note("send")
            if sends == 1 { throw TransportError(code: .late, request: "POST /", message: "late") }
            return HTTPResponse(status: 200, headers: [:], body: Data())
        }
        #expect(await gate.events == ["begin", "acquire", "send", "acquire", "send", "end"])
        // The answer's own time reaches the gate.
        _ = try await gate.sendGranted(app: "a", api: .appleConsumption, purpose: .incremental) { _ in
            HTTPResponse(status: 200, headers: [:], body: Data(), answeredAt: .now - .milliseconds(250))
        }
        #expect(await gate.events.suffix(3) == ["begin", "acquire", "end earlier"])
        await #expect(throws: TransportError.self) {
            _ = try await gate.sendGranted(app: "a", api: .appleConsumption, purpose: .incremental) { _ in
                throw TransportError(code: .connection, request: "POST /", message: "refused")
            }
        }
        // A call that failed is answered too: it frees its place.
        #expect(await gate.events.suffix(3) == ["begin", "acquire", "end"])
    }
}
