import Foundation

/// Writes a `storerecon.yaml` in the project's configuration schema (only keys it knows: unknown keys are errors
/// there) that points storerecon at the simulator and at the key files `storesim init` wrote.
struct StoreReconConfigWriter {
    let spec: ScenarioSpec
    let keys: SimulatorKeys
    let directory: URL
    let baseURL: String
    let databaseURL: String

    func yaml() -> String {
        func path(_ name: String) -> String { quoted(directory.appendingPathComponent(name).path) }
        var lines = [
            "# Written by storesim init: storerecon pointed at the store simulator (\(baseURL)).",
            "# Apple production is \(baseURL)/inApps/..., Apple sandbox \(baseURL)/sandbox/inApps/...,",
            "# Google \(baseURL)/androidpublisher/v3/... with its token endpoint at \(baseURL)/token.",
            "database:",
            "  url: \(quoted(databaseURL))",
            "apps:",
        ]
        for app in spec.apps {
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
            case .google:
                lines.append("    packageName: \(quoted(app.storeId))")
                lines.append("    serviceAccountFile: \(path("play-sa.json"))")
                lines.append("    baseURL: \(quoted(baseURL))")
                lines.append("    tokenURL: \(quoted(baseURL + "/token"))")
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
