import Foundation
import Logging
import PlayDeveloperAPI
import RateLimiting
import StoreHTTP

/// A client wired to a recording transport, a counting quota gate and manual time.
struct ClientHarness {
    let time: ManualTime
    let transport: RecordingTransport
    let gate: CountingQuotaGate
    let client: PlayDeveloperClient

    init(
        _ replies: [RecordingTransport.Reply] = [],
        retryPolicy: RetryPolicy = PlayDeveloperClient.Configuration.defaultRetryPolicy,
        retriesThrottled: Bool = true,
        baseURL: URL = PlayDeveloperClient.Configuration.defaultBaseURL, tokenURL: URL? = nil,
        gate: CountingQuotaGate = CountingQuotaGate(), jitterFraction: Double = 1,
        start: Date = Date(timeIntervalSince1970: 1_790_000_000)
    ) throws {
        time = ManualTime(start, jitterFraction: jitterFraction)
        transport = RecordingTransport(replies)
        self.gate = gate
        client = PlayDeveloperClient(
            app: "acme-android", key: try TestKeys.key(),
            configuration: .init(
                baseURL: baseURL, tokenURL: tokenURL, requestTimeout: 12, retryPolicy: retryPolicy,
                retriesThrottled: retriesThrottled),
            transport: transport, quotaGate: gate, runtime: time.runtime, logger: Logger(label: "test"))
    }

    var apiRequests: [URL] { transport.requests.filter { !$0.isTokenRequest }.map(\.url) }
    var tokenRequests: Int { transport.requests.filter(\.isTokenRequest).count }
}
