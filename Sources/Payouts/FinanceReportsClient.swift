import Foundation
import Logging
import RateLimiting
import StoreCalendar
import StoreHTTP

/// App Store Connect API `GET /v1/financeReports`: Apple's FINANCIAL report of one fiscal month, region ZZ (all
/// countries), as a gzip of tab-separated rows. Every call passes the quota gate as
/// `StoreAPI.appleFinanceReports`.
///
/// [Download Finance Reports](https://developer.apple.com/documentation/appstoreconnectapi/get-v1-financereports)
public struct FinanceReportsClient: Sendable {
    /// Apple's host.
    public static let defaultBaseURL = URL(string: "https://api.appstoreconnect.apple.com")!

    let baseURL: URL
    let token: ConnectToken
    let call: ReportCall

    /// Creates a client for app `app` (quota and errors).
    public init(
        app: String, baseURL: URL = Self.defaultBaseURL, token: ConnectToken, transport: any HTTPTransport,
        gate: any QuotaGate, policy: RetryPolicy = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 30),
        timing: RetryTiming = .live, logger: Logger
    ) {
        self.baseURL = baseURL
        self.token = token
        self.call = ReportCall(
            app: app, api: .appleFinanceReports, transport: transport, gate: gate, policy: policy, timing: timing,
            logger: logger)
    }

    /// The FINANCIAL report of fiscal month `reportDate` (`YYYY-MM`) for `vendorNumber`, or `nil` when Apple has
    /// none yet (404).
    public func financialReport(vendorNumber: String, reportDate: CalendarMonth, purpose: CallPurpose) async throws
        -> Data?
    {
        var components = URLComponents(
            url: baseURL.appendingPathComponent("v1/financeReports"), resolvingAgainstBaseURL: false)!
        components.queryItems = [
            URLQueryItem(name: "filter[reportType]", value: "FINANCIAL"),
            URLQueryItem(name: "filter[regionCode]", value: "ZZ"),
            URLQueryItem(name: "filter[reportDate]", value: reportDate.description),
            URLQueryItem(name: "filter[vendorNumber]", value: vendorNumber),
        ]
        guard let url = components.url else {
            throw PayoutError(.configuration, "vendorNumber \(vendorNumber): cannot be put in a URL")
        }
        let token = self.token
        let response = try await call.send(
            "GET /v1/financeReports \(reportDate)", purpose: purpose,
            makeRequest: {
                let bearer = try token.token()
                return HTTPRequest(
                    url: url, headers: ["Authorization": "Bearer \(bearer)", "Accept": "application/a-gzip"],
                    timeout: 300)
            })
        return response.status == 404 ? nil : response.body
    }
}
