extension StoreSimulator {
    /// The Cloud Storage bucket of the financial reports of the scenario's app `id` (a Google app).
    public func earningsBucket(app id: String) -> String? {
        apps.firstIndex { $0.id == id && $0.platform == .google }.map { Scenario.earningsBucket(app: $0) }
    }

    /// The App Store Connect vendor number of the scenario's app `id` (an Apple app).
    public func vendorNumber(app id: String) -> String? {
        apps.firstIndex { $0.id == id && $0.platform == .apple }.map { FinanceReportsEndpoint.vendorNumber(app: $0) }
    }

    /// Serves the earnings object of `month` (`YYYY-MM`) damaged (not a zip) until `spoiled` is false again.
    public func spoilEarnings(month: String, _ spoiled: Bool = true) {
        state.spoiledEarnings.withLock { months in
            if spoiled { months.insert(month) } else { months.remove(month) }
        }
    }
}
