import ArgumentParser
import Foundation
import Payouts
import RateLimiting
import Reconciler
import StoreCalendar

/// `storerecon sync payouts [--app ID] [--month YYYY-MM]`.
struct SyncPayoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payouts",
        abstract: "Fetch the stores' monthly financial reports not fetched yet (Google earnings, Apple FINANCIAL).",
        discussion: """
            Google: lists earnings/earnings_YYYYMM_*.zip in apps[].earningsBucket (Cloud Storage JSON API, the \
            service account with devstorage.read_only) and downloads what is new or re-issued. Apple: asks App Store \
            Connect financeReports (FINANCIAL, region ZZ, apps[].vendorNumber) for each fiscal month not stored yet; \
            a month Apple has not published is skipped. Without --month: every month since the ledger's first refund. \
            Each report is stored whole, once by content (the same bytes already loaded under another name, by hand \
            or fetched, are not stored again); a re-issued one replaces the old in one transaction; a report dropped \
            with `payouts drop` is not stored again. Apps without earningsBucket / vendorNumber are skipped.
            Example: storerecon sync payouts --app acme-android --month 2026-10
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var jobs: JobOptions

    @Option(name: .long, help: "Only this app (default: every app with earningsBucket or vendorNumber).")
    var app: String?

    @Option(name: .long, help: "Only this month, YYYY-MM (Google: Pacific calendar month; Apple: fiscal month).")
    var month: String?

    func validate() throws {
        _ = try parsedMonth()
    }

    /// `--month`, read.
    /// - Throws: `ValidationError` (a usage error) naming the text.
    func parsedMonth() throws -> CalendarMonth? {
        guard let month else { return nil }
        do {
            return try CalendarMonth(month)
        } catch {
            throw ValidationError("--month \(month): expected YYYY-MM")
        }
    }

    func run() async throws {
        try await CommandRuntime.run(options, jobs: jobs, command: "sync payouts") { runtime in
            let apps = try runtime.apps(matching: app, \.fetchesPayouts) {
                "no \($0.platform == .apple ? "vendorNumber" : "earningsBucket") configured"
            }
            let month = try parsedMonth()
            try await runtime.runJobs(PayoutSync.job, apps: apps) { app, environment in
                try await NightlyPlan.syncPayouts(app: app, month: month, in: environment)
            }
        }
    }
}
