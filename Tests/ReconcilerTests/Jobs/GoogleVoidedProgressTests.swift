import Foundation
import RateLimiting
import Testing

@testable import Reconciler

/// The terminal progress line of the Google voided sync and backfill (pure: no terminal, no database).
@Suite("Google voided progress line")
struct GoogleVoidedProgressTests {
    @Test func theLineShowsPagesRowsCallsLeftPositionAndETA() {
        var summary = GoogleVoidedSync.Summary()
        summary.pages = 12
        summary.rows = 12_000
        summary.inserted = 11_990
        let line = GoogleVoidedSync.progressLine(
            app: "demo-android", job: "google_voided", summary: summary, callsLeft: 5988, fraction: 0.4, elapsed: 60)
        #expect(
            line
                == "demo-android google_voided: 12 pages, 12000 rows, 11990 new, 5988 calls left today, "
                + "~40% of the window, ETA 1m30s")
        let bare = GoogleVoidedSync.progressLine(
            app: "a", job: "j", summary: summary, callsLeft: nil, fraction: nil, elapsed: 5)
        #expect(bare == "a j: 12 pages, 12000 rows, 11990 new")
    }

    @Test func callsLeftFollowThePurposeAndTheStoresAnswer() {
        let usage = GoogleVoidedSync.QuotaLeft(used: 4000, usedBackfill: 2900, exhausted: false)
        #expect(usage.left(dailyCap: 6000, backfillCap: 3000, purpose: .incremental) == 2000)
        #expect(usage.left(dailyCap: 6000, backfillCap: 3000, purpose: .backfill) == 100)
        #expect(usage.left(dailyCap: nil, backfillCap: nil, purpose: .incremental) == nil)
        let spent = GoogleVoidedSync.QuotaLeft(used: 10, usedBackfill: 0, exhausted: true)
        #expect(spent.left(dailyCap: 6000, backfillCap: 3000, purpose: .incremental) == 0)
    }

    @Test func durationsReadAsAnOperatorWouldSayThem() {
        #expect(GoogleVoidedSync.duration(44.6) == "45s")
        #expect(GoogleVoidedSync.duration(185) == "3m05s")
        #expect(GoogleVoidedSync.duration(7830) == "2h10m")
    }
}
