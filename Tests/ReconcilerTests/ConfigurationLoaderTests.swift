import Foundation
import Reconciler
import Testing

@Suite("ConfigurationLoader")
struct ConfigurationLoaderTests {
    static let valid = """
        database:
          url: "host=/tmp dbname=recon"
        apps:
          - id: acme-ios
            platform: apple
            bundleId: com.acme.app
            appAppleId: 1234567890
            environment: production
            issuerId: "57246542-96fe-1a63-e053-0824d011072a"
            keyId: "2X9R4HXF34"
            privateKeyFile: ${APPLE_KEY_FILE}
            rootCertificates: [/etc/storerecon/AppleRootCA-G3.cer]
          - id: acme-android
            platform: google
            packageName: com.acme.app
            serviceAccountFile: /etc/storerecon/play-sa.json
            baseURL: http://127.0.0.1:8787
        limits:
          acme-android: { voidedPerDay: 3000 }
        recheck: { lead: 48h, lag: 12h }
        products:
          premium.monthly: { tier: 2, priceMilli: 9990, currency: USD }
        """

    let environment = ["APPLE_KEY_FILE": "/secrets/AuthKey.p8"]

    @Test func loadsAValidFileWithSubstitutionAndDefaults() throws {
        let configuration = try ConfigurationLoader(environment: environment).load(text: Self.valid, source: "t.yaml")
        #expect(configuration.database.url == "host=/tmp dbname=recon")
        #expect(configuration.apps.map(\.id) == ["acme-ios", "acme-android"])
        #expect(configuration.apps[0].privateKeyFile == "/secrets/AuthKey.p8")
        #expect(configuration.apps[1].environment == "production")
        #expect(configuration.limits["acme-android"]?.voidedPerDay == 3000)
        #expect(configuration.recheck.lead.seconds == 48 * 3600)
        #expect(configuration.recheck.concurrency == 4)
        #expect(configuration.sync.googleOverlap.seconds == 3600)
        #expect(configuration.sync.appleRecheckAfter.seconds == 20 * 3600)
        #expect(configuration.sync.appleBackfillPerNight == 1000)
        #expect(configuration.products["premium.monthly"]?.priceMilli == 9990)
        #expect(configuration.reports.timeZone == "UTC")
    }

    /// One bundle id in Apple's production and in its sandbox is two store apps, each with its own quota.
    @Test func aBundleIdMayBeConfiguredOncePerAppleEnvironment() throws {
        let apple = "platform: apple, bundleId: b, issuerId: i, keyId: k, privateKeyFile: /k.p8"
        let text = """
            apps:
              - { id: live, \(apple), appAppleId: 1, rootCertificates: [/r.cer] }
              - { id: test, \(apple), environment: sandbox, rootCertificates: [/r.cer] }
            limits:
              live: { refundHistoryPerSecond: 5 }
            """
        let configuration = try ConfigurationLoader(environment: [:]).load(text: text, source: "t.yaml")
        #expect(configuration.apps.map(\.id) == ["live", "test"])
        let twice = text.replacingOccurrences(
            of: "environment: sandbox", with: "environment: production, appAppleId: 1")
        let error = #expect(throws: ReconcilerError.self) {
            try ConfigurationLoader(environment: [:]).load(text: twice, source: "t.yaml")
        }
        #expect(
            error?.message.contains("apps[1].bundleId: b is app live's too") == true, "\(String(describing: error))")
    }

    @Test func databaseURLFromTheEnvironmentWins() throws {
        var environment = self.environment
        environment["STORERECON_DATABASE_URL"] = "postgresql:///other"
        let configuration = try ConfigurationLoader(environment: environment).load(text: Self.valid, source: "t.yaml")
        #expect(configuration.database.url == "postgresql:///other")
    }

    @Test(arguments: [
        ("apps:\n  - id: a\n    platform: apple\n    bundleld: x\n", "apps[0].bundleld: unknown key"),
        ("databse:\n  url: x\n", "databse: unknown key"),
        ("recheck: { lead: soon }\n", "recheck.lead: expected a duration"),
        ("apps:\n  - id: a\n    platform: windows\n", "apps[0].platform"),
        ("apps:\n  - platform: google\n", "apps[0].id: required key is missing"),
        ("apps:\n  - id: g\n    platform: google\n    serviceAccountFile: /k.json\n", "apps[0].packageName: required"),
        (
            "apps:\n  - id: g\n    platform: google\n    packageName: p\n    serviceAccountFile: /k\n    bundleId: b\n",
            "apps[0].bundleId: only valid for apple apps"
        ),
        (
            "apps:\n  - id: g\n    platform: google\n    packageName: p\n    serviceAccountFile: /k\n"
                + "    environment: sandbox\n",
            "apps[0].environment: only valid for apple apps"
        ),
        (
            "apps:\n  - id: g\n    platform: google\n    packageName: p\n    serviceAccountFile: /k\n"
                + "    rootCertificates: []\n",
            "apps[0].rootCertificates: only valid for apple apps"
        ),
        ("apps: notalist\n", "apps: expected a list"),
        ("recheck: { concurrency: many }\n", "recheck.concurrency: expected an integer"),
        ("nightly: { concurrency: 0 }\n", "nightly.concurrency: expected a whole number of connections, 1 or more"),
        ("nightly: { appTimeout: 6 }\n", "nightly.appTimeout: a bare number has no unit"),
        ("nightly: { appTimout: 6h }\n", "nightly.appTimout: unknown key"),
        ("database:\n  url: ${NOT_SET_ANYWHERE}\n", "database.url: environment variable NOT_SET_ANYWHERE is not set"),
        (
            "apps:\n  - id: g\n    platform: google\n    packageName: p\n    serviceAccountFile: /k\n"
                + "    baseURL: http://example.com\n",
            "apps[0].baseURL: expected an https URL"
        ),
        ("limits:\n  ghost: { voidedPerDay: 1 }\n", "limits.ghost: no app has this id"),
        ("limits:\n  a: { voidedPer30Seconds: 0 }\n", "limits.a.voidedPer30Seconds: expected a whole number of calls"),
        ("limits:\n  a: { refundHistoryPerSecond: -2 }\n", "limits.a.refundHistoryPerSecond: expected requests per"),
        ("limits:\n  a: { quotaMarginMs: 60000 }\n", "limits.a.quotaMarginMs: expected milliseconds from 0"),
        ("reports: { timeZone: Mars/Olympus }\n", "reports.timeZone"),
        (
            "limits: {}\nrecheck: { lead: 48h }\nlimits: {}\n",
            "not valid YAML: duplicate key limits in one mapping (first at line 1)"
        ),
        ("nightly: { onLocked: later }\n", "nightly.onLocked: expected one of: skip, wait"),
        ("reports: { timeZone: GMT+05 }\n", "reports.timeZone: expected an IANA time zone name (such as"),
        ("sync: { appleRecheckAfter: 20 }\n", "sync.appleRecheckAfter: a bare number has no unit"),
        ("sync: { appleBackfillPerNight: -1 }\n", "sync.appleBackfillPerNight: expected 0 or more"),
        ("sync: { appleSweepCustomers: -1 }\n", "sync.appleSweepCustomers: expected 0 or more"),
        ("sync: { backfillShare: 2 }\n", "sync.backfillShare"),
        ("key: [unclosed\n", "not valid YAML"),
        (
            "apps:\n  - id: g1\n    platform: google\n    packageName: p1\n    serviceAccountFile: /k\n"
                + "    rtdnSubscription: projects/x/subscriptions/s\n"
                + "  - id: g2\n    platform: google\n    packageName: p2\n    serviceAccountFile: /k\n"
                + "    rtdnSubscription: projects/x/subscriptions/s\n",
            "apps[1].rtdnSubscription: projects/x/subscriptions/s is app g1's too"
        ),
        (
            "apps:\n  - { id: g1, platform: google, packageName: p, serviceAccountFile: /k }\n"
                + "  - { id: g2, platform: google, packageName: p, serviceAccountFile: /k }\n",
            "apps[1].packageName: p is app g1's too: configure each store app once"
        ),
        (
            "apps:\n  - { id: g, platform: google, packageName: p, serviceAccountFile: /k }\n"
                + "limits:\n  g: { voidedPerDay: 10, refundHistoryPerSecond: 2 }\n",
            "limits.g.refundHistoryPerSecond: an Apple limit, and g is a google app"
        ),
        (
            "products:\n  p: { prices: { usd: \"9.99\", USD: \"10.99\" } }\n",
            "products.p.prices: USD is given twice"
        ),
        (
            "products:\n  p: { priceMilli: 9990, currency: usd, prices: { USD: \"10.99\" } }\n",
            "products.p.prices: USD is given twice"
        ),
    ])
    func errorsNameTheKeyPath(_ text: String, _ expected: String) {
        let error = #expect(throws: ReconcilerError.self) {
            try ConfigurationLoader(environment: [:]).load(text: text, source: "bad.yaml")
        }
        #expect(error?.code == .configuration)
        #expect(error?.exitCode == 78)
        #expect(error?.message.hasPrefix("bad.yaml: ") == true)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "no error")")
    }

    @Test func theQuotaMarginIs250MsByDefaultAndSetPerApp() throws {
        let defaults = try ConfigurationLoader(environment: environment).load(text: Self.valid, source: "t.yaml")
        let voided = defaults.quotaPolicy.limit(app: "acme-android", api: .googleVoidedPurchases)
        #expect(voided?.windows.first { $0.window == .seconds(30) }?.margin == .milliseconds(250))
        #expect(voided?.dailyCap == 3000)
        let text = Self.valid.replacingOccurrences(
            of: "acme-android: { voidedPerDay: 3000 }",
            with: "acme-android: { voidedPerDay: 3000, quotaMarginMs: 1000 }\n  acme-ios: { quotaMarginMs: 1000 }")
        let widened = try ConfigurationLoader(environment: environment).load(text: text, source: "t.yaml")
        let policy = widened.quotaPolicy
        let window = policy.limit(app: "acme-android", api: .googleVoidedPurchases)?.windows
        #expect(window?.first { $0.window == .seconds(30) }?.margin == .seconds(1))
        #expect(policy.limit(app: "acme-android", api: .googleVoidedPurchases)?.dailyCap == 3000)
        // Never more than 5 % of a window: Apple's per-second windows keep 50 ms at most.
        let refunds = try #require(policy.limit(app: "acme-ios", api: .appleRefundHistory)?.windows.first)
        #expect(refunds.margin == refunds.window / 20)
        #expect(refunds.count == 10)
    }

    @Test func secretsInValuesAreNeverEchoed() {
        let text = "database:\n  url: \"postgresql://u:TopSecret99@h/db\"\n  extra: 1\n"
        let error = #expect(throws: ReconcilerError.self) {
            try ConfigurationLoader(environment: [:]).load(text: text, source: "s.yaml")
        }
        #expect(error?.message.contains("database.extra") == true)
        #expect(error?.message.contains("TopSecret99") == false)
    }

    @Test func aMissingFileIsAConfigurationError() {
        let error = #expect(throws: ReconcilerError.self) {
            try ConfigurationLoader(environment: [:]).load(path: "/nonexistent/storerecon.yaml")
        }
        #expect(error?.exitCode == 78)
        #expect(error?.message.contains("/nonexistent/storerecon.yaml") == true)
        #expect(error?.message.contains("--config FILE or STORERECON_CONFIG") == true)
    }

    /// Key and certificate paths written relative are relative to the configuration file, not to wherever cron or
    /// systemd started the binary; absolute ones are kept.
    @Test func relativeKeyPathsAreRelativeToTheConfigurationFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cfgpaths-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = Self.valid.replacingOccurrences(of: "${APPLE_KEY_FILE}", with: "keys/AuthKey.p8")
            .replacingOccurrences(of: "/etc/storerecon/play-sa.json", with: "./play-sa.json")
        try text.write(to: directory.appendingPathComponent("storerecon.yaml"), atomically: true, encoding: .utf8)
        let configuration = try ConfigurationLoader(environment: [:])
            .load(path: directory.appendingPathComponent("storerecon.yaml").path)
        let base = directory.standardizedFileURL.path
        #expect(configuration.apps[0].privateKeyFile == base + "/keys/AuthKey.p8")
        #expect(configuration.apps[0].rootCertificates == ["/etc/storerecon/AppleRootCA-G3.cer"])
        #expect(configuration.apps[1].serviceAccountFile == base + "/play-sa.json")
    }

    @Test func pathResolution() {
        #expect(ConfigurationLoader(environment: [:]).resolvePath(explicit: nil) == "storerecon.yaml")
        #expect(
            ConfigurationLoader(environment: ["STORERECON_CONFIG": "/e.yaml"]).resolvePath(explicit: nil) == "/e.yaml")
        #expect(
            ConfigurationLoader(environment: ["STORERECON_CONFIG": "/e.yaml"]).resolvePath(explicit: "/x.yaml")
                == "/x.yaml")
    }

    @Test(arguments: [("90s", 90), ("30m", 1800), ("72h", 259_200), ("2d", 172_800)])
    func durations(_ text: String, _ seconds: Int64) {
        #expect(ConfigDuration(text: text)?.seconds == seconds)
    }

    /// Found by the hostile-input property test: an unknown key was echoed whole, so a file with a long key gave a
    /// message of any length.
    @Test func theAppleRecheckIntervalIsADuration() throws {
        let text = Self.valid + "\nsync: { appleRecheckAfter: 6h, appleBackfillPerNight: 0 }\n"
        let configuration = try ConfigurationLoader(environment: environment).load(text: text, source: "t.yaml")
        #expect(configuration.sync.appleRecheckAfter.seconds == 6 * 3600)
        #expect(configuration.sync.appleBackfillPerNight == 0)
    }

    @Test func aLongUnknownKeyIsClippedInTheError() throws {
        let key = String(repeating: "k", count: 1000)
        let error = try #require(throws: ReconcilerError.self) {
            try ConfigurationLoader(environment: [:]).load(text: "\(key): 1\n", source: "c.yaml")
        }
        #expect(error.message.contains("kkk...: unknown key"))
        #expect(error.message.utf8.count < 1000)
    }
}
