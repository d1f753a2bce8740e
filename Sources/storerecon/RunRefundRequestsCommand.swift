import ArgumentParser
import Foundation
import Reconciler

/// `storerecon run refund-requests [--app ID]`.
struct RunRefundRequestsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refund-requests",
        abstract: "Answer the stores' refund requests before their deadlines (every 10 minutes from cron).",
        discussion: """
            Google apps with rtdnSubscription: pulls storerecon's own Pub/Sub subscription on the RTDN topic, \
            stores every message, then acknowledges it; each pending refund review is decided the same way and \
            answered with orders.reviewrefund before its 24-hour deadline (Orders quota). \
            Apple apps: pages Notification History for CONSUMPTION_REQUEST from this job's own checkpoint less \
            sync.appleOverlap, records each request once, decides it by the app's refundRequests rules with the \
            facts loaded by `import consumption`, and sends Send Consumption Information v2 before the 12-hour \
            deadline, nearest deadline first, through the shared quota gate; REFUND and REFUND_DECLINED \
            notifications then record the store's decision. A request is answered at most once; one past its \
            deadline is recorded missed; without facts no_facts, without consent no_consent (both decided again on \
            the next run until the deadline). Exit codes as every job: 75 on quota or an outage (progress saved), \
            1 when Apple refused an answer or a payload failed verification. The apps run side by side (each on \
            its own store quota) within nightly.concurrency database connections: Apple's apps, which wait on \
            Apple's per-second quota, start first; Google's wait until each running Apple app has sent its first \
            answers, then fill the gaps (two per core until the Apple apps are done).
            Example (cron): */10 * * * * storerecon run refund-requests --quiet
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var jobs: JobOptions

    @Option(name: .long, help: "Only this app (default: every Apple app and every Google app with rtdnSubscription).")
    var app: String?

    func run() async throws {
        try await CommandRuntime.run(options, jobs: jobs, command: "run refund-requests") { runtime in
            // Google apps take part once storerecon's own RTDN subscription is configured.
            let apps = try runtime.apps(matching: app, { $0.platform == .apple || $0.rtdnSubscription != nil }) { _ in
                "a Google app without rtdnSubscription (its refund reviews come only through that subscription)"
            }
            let configuration = runtime.configuration
            // Apple's answers wait on Apple's per-second quota (50 a second), Google's only on the cores: Apple's
            // apps start first and Google's fill the gaps.
            let paced: (AppConfig) -> Bool = { $0.platform == .apple }
            try await runtime.runJobsSideBySide(AppleRefundRequests.job, apps: apps, paced: paced) { app, environment in
                let (gate, logger) = (environment.gate, environment.logger)
                switch app.platform {
                case .apple:
                    let access = try StoreClients.apple(
                        for: app, configuration: configuration, gate: gate, logger: logger)
                    try await AppleRefundRequests(app: app, configuration: configuration, access: access)
                        .run(in: environment)
                case .google:
                    let play = try StoreClients.play(for: app, gate: gate, logger: logger)
                    let pubsub = try StoreClients.pubsub(for: app, gate: gate, logger: logger)
                    try await GoogleRefundRequests(
                        app: app, play: play, pubsub: pubsub, prices: configuration.configuredPrices
                    ).run(in: environment)
                }
            }
        }
    }
}

/// `storerecon import consumption FILE.csv`.
struct ImportConsumptionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consumption",
        abstract:
            "Load the app backend's facts for refund requests (platform,purchase_id,customer_consented,delivery_status,consumption_percent,sample_content_provided,as_of).",
        discussion: """
            RFC 4180 CSV with a header row, columns in any order. purchase_id: Apple transactionId or \
            originalTransactionId, Google orderId or purchaseToken. delivery_status: delivered, \
            undelivered_quality_issue, undelivered_wrong_item, undelivered_server_outage or undelivered_other. \
            consumption_percent: 0 to 100 with at most 3 decimals, empty when unknown. as_of: RFC 3339 with an \
            offset; a purchase's newest as_of wins. Any bad line (each reported with its number) means nothing is \
            written.
            Example: storerecon import consumption facts.csv
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The CSV file.")
    var file: String

    @Flag(name: .long, help: "Read and check the file; write nothing.")
    var dryRun = false

    func run() async throws {
        try await CommandRuntime.run(options, command: "import") { runtime in
            let connection = try runtime.connect()
            defer { connection.close() }
            try Migrator(connection: connection).verifyCurrent()
            let report = try ConsumptionImporter(connection: connection).importFile(path: file, dryRun: dryRun)
            for bad in report.badLines.prefix(1000) { runtime.logger.error("\(file): \(bad)") }
            if report.badLines.count > 1000 {
                runtime.logger.error("\(file): \(report.badLines.count - 1000) more bad lines not shown")
            }
            if !report.badLines.isEmpty {
                throw ReconcilerError(.input, "\(file): \(report.badLines.count) bad lines; nothing written")
            }
            let outcome = dryRun ? "dry run: nothing written" : "\(report.written) facts written"
            runtime.logger.info("\(file): \(report.rowsRead) rows read; \(outcome)")
        }
    }
}
