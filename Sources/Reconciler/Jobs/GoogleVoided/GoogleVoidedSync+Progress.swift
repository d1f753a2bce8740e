import Foundation
import Ledger
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// The terminal progress line of the Google voided sync and backfill: pages, rows, new rows, the calls left today
/// for this purpose, how far into the window the last row is, and an estimate of the time left.
extension GoogleVoidedSync {
    /// Calls of the daily budget left for a purpose, from today's `quota_day` row (one short query; only asked when
    /// progress is shown on a terminal).
    struct QuotaLeft: Equatable {
        /// Calls granted today, all purposes.
        var used: Int
        /// Of `used`, calls granted to backfills.
        var usedBackfill: Int
        /// The store said the day's quota is spent.
        var exhausted: Bool

        /// Calls left for `purpose`, or nil when there is no daily cap.
        func left(dailyCap: Int?, backfillCap: Int?, purpose: CallPurpose) -> Int? {
            guard let dailyCap else { return nil }
            if exhausted { return 0 }
            let day = max(0, dailyCap - used)
            guard purpose == .backfill, let backfillCap else { return day }
            return min(day, max(0, backfillCap - usedBackfill))
        }
    }

    /// Updates the progress line, when one is shown.
    func showProgress(
        _ summary: Summary, fraction: Double?, job: String, elapsed: Duration, purpose: CallPurpose,
        in environment: JobEnvironment
    ) {
        guard let progress = environment.progress, progress.isEnabled else { return }
        // Progress is a nicety: a failed read of the day's counts leaves the figure out rather than stopping the job.
        let usage = try? Self.quotaUsage(app: app.id, on: environment.connection)
        let left = usage?.left(dailyCap: quotaCaps.daily, backfillCap: quotaCaps.backfill, purpose: purpose)
        progress.update(
            Self.progressLine(
                app: app.id, job: job, summary: summary, callsLeft: left,
                fraction: fraction, elapsed: elapsed.seconds))
    }

    /// `demo-android google_voided: 12 pages, 12000 rows, 11990 new, 5988 calls left today, ~40% of the window,
    /// ETA 1m30s`.
    static func progressLine(
        app: String, job: String, summary: Summary, callsLeft: Int?, fraction: Double?, elapsed: Double
    ) -> String {
        var line = "\(app) \(job): \(summary.pages) pages, \(summary.rows) rows, \(summary.inserted) new"
        if let callsLeft { line += ", \(callsLeft) calls left today" }
        if let fraction {
            line += String(format: ", ~%.0f%% of the window", fraction * 100)
            if fraction > 0.01, fraction < 1 {
                line += ", ETA " + duration(elapsed * (1 - fraction) / fraction)
            }
        }
        return line
    }

    /// A rough position in the window (0...1) from the last row's void time (rows come in recorded-time order, and
    /// most voids are recorded within minutes).
    static func position(_ last: RefundRecord?, start: Date, end: Date) -> Double? {
        guard let last else { return nil }
        let position = last.refundedAt.timeIntervalSince(start)
        let span = end.timeIntervalSince(start)
        guard span > 0, position > 0 else { return nil }
        return min(1, position / span)
    }

    /// `45s`, `3m05s`, `2h10m`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, whole % 3600 / 60)
    }

    static func quotaUsage(app: String, on connection: PostgresConnection) throws -> QuotaLeft {
        let rows = try connection.query(
            """
            SELECT used, used_backfill, exhausted_at IS NOT NULL AS exhausted FROM quota_day
            WHERE app_id = $1 AND api = $2 AND pacific_day = quota_pacific_day(clock_timestamp())
            """, [app, StoreAPI.googleVoidedPurchases.rawValue])
        guard let row = rows.first else { return QuotaLeft(used: 0, usedBackfill: 0, exhausted: false) }
        return QuotaLeft(
            used: try row.decode("used"), usedBackfill: try row.decode("used_backfill"),
            exhausted: try row.decode("exhausted"))
    }
}
