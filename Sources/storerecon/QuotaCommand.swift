import ArgumentParser
import Foundation
import RateLimiting
import Reconciler

/// `storerecon quota clear`.
struct QuotaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quota",
        abstract: "The shared quota gate: lift a block a store set.",
        discussion: """
            A store's throttling answer blocks an API for every process (a few of its windows at most), and its \
            "per day" answer until the US-Pacific day turns; `storerecon status` lists each block (BLOCKED). See \
            the Runbook, "A store blocked us" and "Lift an exhausted day".
            """,
        subcommands: [Clear.self]
    )

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Lift a store's block on an API: a throttling block, and today's 'quota spent' mark.",
            discussion: """
                Use after the cause is gone: the proxy that sent a wrong Retry-After is fixed, or the daily quota was \
                raised in Google Cloud Console. A configured daily cap (limits in the configuration) is not lifted: \
                raise it there.
                Example: storerecon quota clear --app acme-android --api google.voidedpurchases
                """)

        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "The app id.") var app: String
        @Option(name: .long, help: "The store API, as status names it (e.g. google.voidedpurchases).") var api: String

        func run() async throws {
            try await CommandRuntime.run(options, command: "quota clear") { runtime in
                let configured = try runtime.apps(matching: app)[0]
                let configuration = runtime.configuration
                let own = configuration.quotaPolicy.limits(for: app).apis.keys
                    .filter { $0.rawValue.hasPrefix(configured.platform.rawValue + ".") }
                // A production Apple app's calls that fall back to sandbox have buckets of their own, which status
                // lists and a sandbox throttle blocks.
                let sandbox =
                    configured.platform == .apple && StoreClients.appleEnvironment(configured) == .production
                    ? own.map(\.sandboxFallback) : []
                let known = (own + sandbox).map(\.rawValue).sorted()
                guard known.contains(api) else {
                    throw ValidationError(
                        "--api \(api): not an API of \(app) (one of \(known.joined(separator: ", ")))")
                }
                let gate = PostgresQuotaGate(
                    conninfo: configuration.database.url, policy: configuration.quotaPolicy, clock: ContinuousClock())
                let cleared = try await gate.clear(app: app, api: StoreAPI(rawValue: api))
                await gate.close()
                print(Self.describe(cleared, app: app, api: api))
            }
        }

        static func describe(_ cleared: QuotaClearance, app: String, api: String) -> String {
            var lines: [String] = []
            if let block = cleared.throttle {
                lines.append("lifted \(api) block until \(StatusJSON.rfc3339(block.until)) (\(block.reason))")
            }
            if let day = cleared.exhaustedDay {
                lines.append("lifted \(api) 'daily quota spent' mark of Pacific day \(day)")
            }
            if lines.isEmpty { lines.append("\(app) \(api): no store block to lift") }
            if let cap = cleared.capReached {
                lines.append(
                    "still blocked: today's calls reached the configured daily cap of \(cap); raise it in limits.\(app)"
                )
            }
            return lines.joined(separator: "\n")
        }
    }
}
