import Foundation

/// Writes a `storerecon.yaml` in the project's configuration schema (only keys it knows: unknown keys are errors
/// there) that points storerecon at the simulator and at the key files `storesim init` wrote, the financial reports
/// included (Google `earningsBucket`, Apple `vendorNumber` and the App Store Connect key), so `sync payouts` and the
/// tie-out work as they are.
struct StoreReconConfigWriter {
    let spec: ScenarioSpec
    let keys: SimulatorKeys
    let directory: URL
    let baseURL: String
    let databaseURL: String
    /// Whether to configure the financial reports (`storesim init --no-financial-reports` leaves them out).
    let financialReports: Bool

    func yaml() -> String {
        func path(_ name: String) -> String { quoted(directory.appendingPathComponent(name).path) }
        var lines = [
            "# Written by storesim init: storerecon pointed at the store simulator (\(baseURL)).",
            "# Apple production is \(baseURL)/inApps/..., Apple sandbox \(baseURL)/sandbox/inApps/...,",
            "# Google \(baseURL)/androidpublisher/v3/... with its token endpoint at \(baseURL)/token.",
            "# Financial reports: Google Cloud Storage \(baseURL)/storage/v1/b/BUCKET/o,",
            "# Apple App Store Connect \(baseURL)/v1/financeReports.",
            "database:",
            "  url: \(quoted(databaseURL))",
            "apps:",
        ]
        for (index, app) in spec.apps.enumerated() {
            lines.append("  - id: \(quoted(app.id))")
            lines.append("    platform: \(app.platform.rawValue)")
            switch app.platform {
            case .apple:
                lines.append("    bundleId: \(quoted(app.storeId))")
                if let appAppleId = app.appAppleId { lines.append("    appAppleId: \(appAppleId)") }
                lines.append("    environment: production")
                lines.append("    issuerId: \(quoted(keys.appStoreKey.issuerId))")
                lines.append("    keyId: \(quoted(keys.appStoreKey.keyId))")
                lines.append("    privateKeyFile: \(path("AuthKey_\(keys.appStoreKey.keyId).p8"))")
                lines.append("    rootCertificates: [\(path("SimulatorRootCA.der"))]")
                lines.append("    baseURL: \(quoted(baseURL))")
                lines.append("    sandboxBaseURL: \(quoted(baseURL + "/sandbox"))")
                guard financialReports else { continue }
                // The simulator's App Store Connect key is the In-App Purchase key: one key signs both APIs here.
                lines.append("    vendorNumber: \(quoted(FinanceReportsEndpoint.vendorNumber(app: index)))")
                lines.append("    connectIssuerId: \(quoted(keys.appStoreKey.issuerId))")
                lines.append("    connectKeyId: \(quoted(keys.appStoreKey.keyId))")
                lines.append("    connectPrivateKeyFile: \(path("AuthKey_\(keys.appStoreKey.keyId).p8"))")
                lines.append("    connectBaseURL: \(quoted(baseURL))")
            case .google:
                lines.append("    packageName: \(quoted(app.storeId))")
                lines.append("    serviceAccountFile: \(path("play-sa.json"))")
                lines.append("    baseURL: \(quoted(baseURL))")
                lines.append("    tokenURL: \(quoted(baseURL + "/token"))")
                if spec.refundReviews > 0 {
                    // storerecon's own pull subscription on the app's RTDN topic, where the reviews arrive.
                    lines.append("    rtdnSubscription: \(quoted(PubSubSubscriptions.name(app: app.id)))")
                    lines.append("    pubsubBaseURL: \(quoted(baseURL))")
                }
                guard financialReports else { continue }
                lines.append("    earningsBucket: \(quoted(Scenario.earningsBucket(app: index)))")
                lines.append("    storageBaseURL: \(quoted(baseURL))")
            }
        }
        lines.append("products:")
        for product in spec.products {
            lines.append(
                "  \(quoted(product.productId)): { tier: \(product.tier), priceMilli: \(product.priceMilli), "
                    + "currency: \(quoted(product.currency)) }")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A YAML double-quoted scalar (JSON string syntax is valid YAML).
    private func quoted(_ text: String) -> String {
        var json = JSONWriter()
        json.string(text)
        return json.text
    }
}
