import Foundation
import StoreHTTP
import StoreSimulator
import Testing

/// The quota gate's margin (250 ms) assumes a granted call leaves at once. A transport that holds calls back for a
/// free connection (URLSession's per-host limit was 16, while a voided sync keeps up to 64 slices and 8 Orders calls
/// in flight) sends a granted call only when another call's answer frees one, an answer time later: a bench run at
/// 1500 ms had the store refuse such a call. Every call in flight must reach the store at once.
@Suite struct TransportConnectionsTests {
    @Test func eightyCallsInFlightAllReachTheStoreAtOnce() async throws {
        var options = SimulatorOptions(scenario: ScenarioSpec(seed: 3, subscriptions: 10, historyDays: 10))
        // Long enough that all calls overlap at the store however the machine schedules them.
        options.latency = Latency(millis: 1500, jitterMillis: 0)
        try await StoreSimulator.withRunning(options) { simulator in
            let transport = CurlTransport()
            let url = simulator.baseURL.appendingPathComponent(
                "androidpublisher/v3/applications/com.example.demo/purchases/voidedpurchases")
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<80 {
                    group.addTask { try await transport.send(HTTPRequest(url: url, timeout: 30)).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            // Unsigned calls: each refused (401) after the latency, which is all this needs.
            #expect(statuses.count == 80)
            #expect(simulator.mostInFlight(.googleVoidedPurchases) == 80)
        }
    }

    /// libcurl's default connection cache holds four connections per transfer on the multi handle when one ends, so
    /// as a burst drained it closed the connections the next burst opened again (issue 39: 1,236 connections for
    /// 9,400 calls). Kept open, a second burst as wide as the first opens none.
    @Test func aSecondBurstReusesTheFirstBurstsConnections() async throws {
        var options = SimulatorOptions(scenario: ScenarioSpec(seed: 3, subscriptions: 10, historyDays: 10))
        // Long enough that a burst's calls overlap at the store, each on a connection of its own.
        options.latency = Latency(millis: 200, jitterMillis: 0)
        try await StoreSimulator.withRunning(options) { simulator in
            let transport = CurlTransport()
            let url = simulator.baseURL.appendingPathComponent(
                "androidpublisher/v3/applications/com.example.demo/purchases/voidedpurchases")
            func burst() async throws {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<24 {
                        group.addTask { try await transport.send(HTTPRequest(url: url, timeout: 30)).status }
                    }
                    // Unsigned calls: each refused (401) after the latency, which is all this needs.
                    for try await status in group { #expect(status == 401) }
                }
            }
            try await burst()
            let opened = simulator.connectionsAccepted
            #expect(opened > 8, "the burst's calls overlapped")
            try await burst()
            #expect(simulator.connectionsAccepted == opened)
        }
    }
}

/// A granted call that reaches the transport's thread after the moment the quota gate set is not sent: the store
/// never sees it, and the caller is told so (`late`) to ask the gate again.
@Suite struct TransportLeaveByTests {
    @Test func aRequestPastItsLeaveByNeverReachesTheStore() async throws {
        let options = SimulatorOptions(scenario: ScenarioSpec(seed: 3, subscriptions: 10, historyDays: 10))
        try await StoreSimulator.withRunning(options) { simulator in
            let transport = CurlTransport()
            let url = simulator.baseURL.appendingPathComponent(
                "androidpublisher/v3/applications/com.example.demo/purchases/voidedpurchases")
            var request = HTTPRequest(url: url, timeout: 10)
            request.leaveBy = .now - .milliseconds(1)
            let error = await #expect(throws: TransportError.self) { _ = try await transport.send(request) }
            #expect(error?.code == .late)
            #expect(simulator.mostInFlight(.googleVoidedPurchases) == 0)
            // On time, it is sent (refused 401 unsigned, which is all this needs).
            request.leaveBy = .now + .seconds(10)
            let sent = try await transport.send(request)
            #expect(sent.status == 401)
            #expect(simulator.mostInFlight(.googleVoidedPurchases) == 1)
        }
    }
}
