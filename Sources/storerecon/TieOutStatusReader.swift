import Postgres
import Reconciler
import Reports
import StoreCalendar

/// Adds each app's tie-out to a status report: the newest month with a financial report loaded, tied out.
enum TieOutStatusReader {
    static func fill(_ report: inout StatusReport, _ configuration: Configuration, on connection: PostgresConnection)
        throws
    {
        for index in report.apps.indices {
            let app = report.apps[index]
            let rows = try connection.query("SELECT max(month) AS month FROM payout_report WHERE app_id = $1", [app.id])
            guard let month = try rows.first?.decodeIfPresent("month", as: CalendarMonth.self) else { continue }
            let tieOut = try TieOutReport.scan(
                month: month, apps: [app.id: app.platform], detail: false, on: connection
            ) { _, _ in }
            report.apps[index].tieOut = TieOutStatus(
                month: month, lines: tieOut.lineCount, differing: tieOut.differing, withoutCause: tieOut.withoutCause)
        }
    }
}
