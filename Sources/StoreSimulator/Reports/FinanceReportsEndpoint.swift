import Foundation

/// App Store Connect API `GET /v1/financeReports?filter[reportType]=FINANCIAL&filter[regionCode]=ZZ&
/// filter[reportDate]=YYYY-MM&filter[vendorNumber]=N`: a gzip of the fiscal month's FINANCIAL report
/// (``Scenario/financeReport(app:month:now:)``), 404 with `{"errors":[...]}` before the period has ended.
///
/// Signed in with an App Store Connect API key: ES256 with the simulator's key (`kid`), `iss` the issuer id, `aud`
/// `appstoreconnect-v1`, `exp` at most 20 minutes ahead; no `bid` (a Team key is not an app's). The vendor number
/// names the Apple app: `8` followed by the app's index padded to seven digits.
struct FinanceReportsEndpoint {
    let state: SimulatorState

    /// The vendor number of Apple app `app`.
    static func vendorNumber(app: Int) -> String { "8" + String(format: "%07d", app) }

    /// Whether the bearer token is a valid App Store Connect API token.
    func authorized(_ token: String?) -> Bool {
        guard let token, let jwt = CompactJWT(token) else { return false }
        let key = state.keys.appStoreKey
        guard jwt.header["alg"] as? String == "ES256", jwt.header["kid"] as? String == key.keyId,
            key.verifiesES256(jwt.signature, over: jwt.signingInput), jwt.string("iss") == key.issuerId,
            jwt.string("aud") == "appstoreconnect-v1", let expires = jwt.seconds("exp")
        else { return false }
        let now = state.authNow / 1000
        let skew = state.options.clockSkewSeconds
        return expires > now - skew && expires <= now + 1200 + min(skew, 60)
    }

    func handle(_ request: StoreRequest) -> StoreReply {
        guard request.parameter("filter[reportType]") == "FINANCIAL", request.parameter("filter[regionCode]") == "ZZ",
            let month = request.parameter("filter[reportDate]"), let vendor = request.parameter("filter[vendorNumber]")
        else {
            return Self.error(
                400, "PARAMETER_ERROR.INVALID", "reportType FINANCIAL, regionCode ZZ, reportDate required")
        }
        guard
            let app = state.scenario.spec.apps.indices.first(where: {
                state.scenario.spec.apps[$0].platform == .apple && Self.vendorNumber(app: $0) == vendor
            })
        else { return Self.error(403, "FORBIDDEN_ERROR", "The vendor number is not yours.") }
        guard let text = state.scenario.financeReport(app: app, month: month, now: state.now) else {
            return Self.error(404, "NOT_FOUND", "There were no sales for the date specified.")
        }
        var reply = StoreReply(status: 200, body: "", contentType: "application/a-gzip")
        reply.bytes = ReportArchive.gzip(text)
        return reply
    }

    static func error(_ status: Int, _ code: String, _ detail: String) -> StoreReply {
        .json(status) { json in
            json.object { object in
                object.array("errors") { errors in
                    errors.object { error in
                        error.field("status", String(status))
                        error.field("code", code)
                        error.field("title", detail)
                        error.field("detail", detail)
                    }
                }
            }
        }
    }
}
