import ArgumentParser
import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Takes calls from the shared quota, as a store client would, and prints when each was granted.
///
/// Several copies started together show that separate processes share one budget: each prints
/// `grant <database time>` per call, and the merged times must keep every window. With `--url` each grant is
/// followed by a GET to that address (a store simulator counting calls on its own), and a 429 is reported back.
/// With `--store-config` each call is a real `voidedpurchases.list` made by storerecon's own Play client for the
/// configured app, through the same shared gate the commands use (sign-in included), so the store counts them.
@main
struct QuotaProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quota-probe",
        abstract: "Take calls from the shared PostgreSQL quota and print their grant times.",
        discussion: """
            Prints `grant <timestamp>` per call (the database clock), then one `stats` line. Exits 75 when the \
            daily budget is spent, 1 on other errors. The database must be migrated (`storerecon migrate`).
            """)

    @Option(help: "libpq conninfo or URI of the database holding quota_bucket and quota_day.")
    var conninfo: String

    @Option(help: "The app id the quota is counted for.")
    var app: String

    @Option(help: "The store API, e.g. google.voidedpurchases or apple.refundhistory.")
    var api: String

    @Option(help: "How many calls to take.")
    var calls: Int

    @Option(
        name: .customLong("limit"),
        help: """
            A window COUNT/DURATION such as 10/2s, 30/30s or 50/1s (units ms, s, m, h); repeat for several. \
            Without one, the API's published limits apply.
            """)
    var limits: [RateLimit] = []

    @Option(help: "Calls per Pacific day (with --limit; otherwise the published cap applies).")
    var dailyCap: Int?

    @Option(help: "The safety margin added to every --limit window, in milliseconds (default: 5 %, at most 250 ms).")
    var marginMs: Double?

    @Option(help: "incremental or backfill.")
    var purpose: CallPurpose = .incremental

    @Option(help: "The share of a daily cap a backfill may take.")
    var backfillShare: Double = 0.5

    @Option(help: "An address to GET after each grant (a store simulator); a 429 is reported as a throttle.")
    var url: String?

    @Option(
        help: """
            A storerecon.yaml: make each call a voidedpurchases.list of the Google app --app with storerecon's own \
            client (the gate still uses --limit and --daily-cap when given).
            """)
    var storeConfig: String?

    func validate() throws {
        if calls < 0 { throw ValidationError("--calls must not be negative") }
        if let url, URL(string: url)?.scheme == nil { throw ValidationError("--url is not an absolute URL") }
    }

    func run() async throws {
        let storeAPI = StoreAPI(rawValue: api)
        var appLimits = QuotaLimits.published
        if !limits.isEmpty {
            let margin = marginMs.map { Duration.milliseconds($0) }
            let windows = limits.map { RateLimit($0.count, per: $0.window, margin: margin) }
            appLimits[storeAPI] = QuotaLimit(windows: windows, dailyCap: dailyCap)
        } else if let dailyCap {
            appLimits = appLimits.overriding(storeAPI, dailyCap: dailyCap)
        }
        let policy = QuotaPolicy(appLimits: [app: appLimits], backfillShare: backfillShare)
        let gate = PostgresQuotaGate(conninfo: conninfo, policy: policy)
        let target = url.flatMap(URL.init(string:))
        do {
            if let storeConfig {
                try await callTheStore(configPath: storeConfig, gate: gate)
            } else {
                for _ in 0..<calls {
                    let grant = try await gate.acquireGrant(app: app, api: storeAPI, purpose: purpose)
                    print("grant \(PostgresTimestamp.format(grant.grantedAt))")
                    if let target {
                        let feedback = try await call(target)
                        await gate.report(app: app, api: storeAPI, feedback: feedback)
                    }
                }
            }
        } catch let error as QuotaError {
            await printStatistics(gate)
            FileHandle.standardError.write(Data("quota-probe: \(error)\n".utf8))
            throw ExitCode(75)
        }
        await printStatistics(gate)
    }

    /// `calls` first pages of the last day's voided purchases, each through the client's own quota path.
    private func callTheStore(configPath: String, gate: PostgresQuotaGate<ContinuousClock>) async throws {
        let configuration = try ConfigurationLoader().load(path: configPath)
        guard let appConfig = configuration.apps.first(where: { $0.id == app && $0.platform == .google }) else {
            throw ValidationError("\(configPath): no Google app \(app)")
        }
        let client = try StoreClients.play(for: appConfig, gate: gate, logger: Logger(label: "quota-probe"))
        let end = Date().addingTimeInterval(-120)
        for _ in 0..<calls {
            let page = try await client.listVoidedPurchases(
                packageName: appConfig.storeAppId, startTime: end.addingTimeInterval(-86_400), endTime: end,
                maxResults: 1, purpose: purpose)
            print("call \(page.voidedPurchases.count)")
        }
    }

    private func call(_ target: URL) async throws -> QuotaFeedback {
        let (_, response) = try await URLSession.shared.data(from: target)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        print("http \(status)")
        guard status == 429 else { return .accepted }
        let retryAfter = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After").flatMap(Double.init)
        return .throttled(retryAfter: retryAfter)
    }

    private func printStatistics(_ gate: PostgresQuotaGate<ContinuousClock>) async {
        let statistics = gate.statistics
        let mean = statistics.meanAttemptRoundTrip.map { duration in
            let (seconds, attoseconds) = duration.components
            return String(format: "%.3f", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
        }
        print(
            "stats grants=\(statistics.grants) attempts=\(statistics.attempts) waits=\(statistics.waits) "
                + "reconnects=\(statistics.reconnects) meanAttemptMs=\(mean ?? "-")")
    }
}

extension RateLimit: ExpressibleByArgument {
    /// Parses `COUNT/DURATION`: `10/2s`, `30/30s`, `3000/1m`, `10/500ms`.
    public init?(argument: String) {
        let parts = argument.split(separator: "/")
        guard parts.count == 2, let count = Int(parts[0]), count >= 1 else { return nil }
        let text = parts[1]
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        guard let (suffix, scale) = units.first(where: { text.hasSuffix($0.0) }),
            let number = Double(text.dropLast(suffix.count)), number > 0
        else { return nil }
        self.init(count, per: .seconds(number * scale))
    }
}

extension CallPurpose: ExpressibleByArgument {}
