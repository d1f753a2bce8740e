import ArgumentParser
import Foundation
import Reconciler

/// `storerecon recheck [--app ID] [--lead 72h] [--lag 24h]`.
struct RecheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recheck",
        abstract: "Ask the stores about the subscriptions near expiry and record every status change.",
        discussion: """
            Asks about subscriptions whose expiry lies in [now - lag, now + lead] and that were not checked since \
            the expiry moved (once ahead of the expiry, once after it), plus those in grace, billing retry, on hold, \
            paused or pending (at most every 12 hours) and those flagged by the refund jobs. Apple: Get All \
            Subscription Statuses with verified payloads; Google: subscriptionsv2.get. Concurrent processes split \
            the work. With --dry-run, prints the transitions it would record and writes nothing.
            Exit 1 when some answers could not be used (the others are stored); 75 on quota or an outage.
            Example: storerecon recheck --app acme-ios --lead 48h
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Only this app (default: every app).")
    var app: String?

    @Option(name: .long, help: "How far ahead of expiry to ask, e.g. 72h (default: recheck.lead).")
    var lead: String?

    @Option(name: .long, help: "How long after expiry to keep asking, e.g. 24h (default: recheck.lag).")
    var lag: String?

    func run() async throws {
        try await CommandRuntime.run(options, command: "recheck") { runtime in
            let leadOverride = try Self.duration(lead, option: "--lead")
            let lagOverride = try Self.duration(lag, option: "--lag")
            let configuration = runtime.configuration
            let recheckOptions = ExpiryRecheck.Options(configuration.recheck, lead: leadOverride, lag: lagOverride)
            try await runtime.runJobs(ExpiryRecheck.job, apps: try runtime.apps(matching: app)) { app, environment in
                let source = try ExpiryRecheck.source(for: app, configuration: configuration, environment: environment)
                try await ExpiryRecheck(app: app, configuration: configuration, options: recheckOptions, source: source)
                    .run(in: environment)
            }
        }
    }

    static func duration(_ text: String?, option: String) throws -> ConfigDuration? {
        guard let text else { return nil }
        switch ConfigDuration.parse(text) {
        case .success(let duration): return duration
        case .failure(let error):
            let shown = text.count <= 40 ? text : String(text.prefix(37)) + "..."
            throw ValidationError("\(option) \(shown): \(error.message)")
        }
    }
}
