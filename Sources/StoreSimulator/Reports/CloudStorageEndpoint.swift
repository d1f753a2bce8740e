import Foundation

/// The Cloud Storage JSON API over the developer accounts' report buckets (`pubsite_prod_rev_<account>`):
///
/// - `GET /storage/v1/b/{bucket}/o?prefix=&maxResults=&pageToken=`: `{"kind":"storage#objects","items":[...],
///   "nextPageToken"}`, at most three objects a page whatever `maxResults` says (a page may be short while more
///   follow, as Google warns);
/// - `GET /storage/v1/b/{bucket}/o/{name}?alt=media`: the object's bytes.
///
/// The bucket holds one earnings zip per closed Pacific month with transactions
/// (`earnings/earnings_YYYYMM_<account>-1.zip`, generation 1) and a `sales/` object that is not earnings.
struct CloudStorageEndpoint {
    let state: SimulatorState

    /// The object names of app `app`'s bucket, sorted.
    func objects(app: Int) -> [String] {
        let account = Scenario.earningsAccount(app: app)
        let months = state.scenario.earningsMonths(app: app, now: state.now)
        return
            (months.map { "earnings/earnings_\($0.replacingOccurrences(of: "-", with: ""))_\(account)-1.zip" }
            + ["sales/salesreport_\(account).zip"]).sorted()
    }

    func list(_ request: StoreRequest, app: Int) -> StoreReply {
        let prefix = request.parameter("prefix") ?? ""
        let pageSize = min(3, max(1, Int(request.parameter("maxResults") ?? "1000") ?? 1000))
        let names = objects(app: app).filter { $0.hasPrefix(prefix) }
        let start = Int(request.parameter("pageToken") ?? "0") ?? 0
        let page = names.dropFirst(start).prefix(pageSize)
        return .json { json in
            json.object { object in
                object.field("kind", "storage#objects")
                object.array("items") { items in
                    for name in page {
                        items.object { item in
                            item.field("kind", "storage#object")
                            item.field("name", name)
                            item.field("bucket", Scenario.earningsBucket(app: app))
                            item.field("generation", "1")
                            item.field("size", String(body(app: app, name: name)?.count ?? 0))
                        }
                    }
                }
                if start + page.count < names.count { object.field("nextPageToken", String(start + page.count)) }
            }
        }
    }

    func get(_ request: StoreRequest, app: Int, name: String) -> StoreReply {
        guard request.parameter("alt") == "media", let bytes = body(app: app, name: name) else {
            return GoogleError.notFound()
        }
        var reply = StoreReply(status: 200, body: "", contentType: "application/zip")
        reply.bytes = bytes
        return reply
    }

    /// The bytes of an object, or `nil` when the bucket has no such object.
    private func body(app: Int, name: String) -> [UInt8]? {
        guard objects(app: app).contains(name) else { return nil }
        guard name.hasPrefix("earnings/"), let month = Self.month(of: name) else {
            return ReportArchive.zip(name: "salesreport.csv", contents: Array("Order Number\r\n".utf8))
        }
        if state.spoiledEarnings.withLock({ $0.contains(month) }) { return Array("PK\u{3}\u{4} damaged".utf8) }
        guard let csv = state.scenario.earningsCSV(app: app, month: month, now: state.now) else { return nil }
        return ReportArchive.zip(name: "PlayApps_\(month.replacingOccurrences(of: "-", with: "")).csv", contents: csv)
    }

    static func month(of name: String) -> String? {
        guard let range = name.range(of: #"earnings_[0-9]{6}_"#, options: .regularExpression) else { return nil }
        let digits = name[range].dropFirst(9).prefix(6)
        return "\(digits.prefix(4))-\(digits.suffix(2))"
    }
}
