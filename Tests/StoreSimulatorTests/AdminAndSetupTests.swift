import Foundation
import Reconciler
import Testing

@testable import StoreSimulator

@Suite("Admin API and the files storesim init writes")
struct AdminAndSetupTests {
    @Test("the admin API moves the clock, switches faults, and reports stats and ground truth")
    func adminAPI() async throws {
        try await StoreSimulator.withRunning(TestKeys.options(refunds: 200)) { sim in
            let client = TestClient(sim)
            let admin = sim.adminURL
            let start = sim.clock.nowMillis()
            let advanced = try await client.send(
                "POST", admin.appendingPathComponent("clock"),
                body: try JSONSerialization.data(withJSONObject: ["advanceSeconds": 90]))
            #expect(try advanced.json["nowMillis"] as? Int64 == start + 90_000)
            #expect(sim.clock.nowMillis() == start + 90_000)
            let token = try await client.googleAccessToken()
            #expect(try await client.send("GET", client.voidedURL([:]), bearer: token).status == 200)
            let faults = try JSONSerialization.data(withJSONObject: [
                "endpoint": "googleVoidedPurchases", "rates": ["serverError": 1],
            ])
            #expect(try await client.send("POST", admin.appendingPathComponent("faults"), body: faults).status == 200)
            #expect([500, 503].contains(try await client.send("GET", client.voidedURL([:]), bearer: token).status))
            let stats = try await client.send("GET", admin.appendingPathComponent("stats")).json
            let entries = try #require(stats["endpoints"] as? [[String: Any]])
            let voided = try #require(entries.first { $0["endpoint"] as? String == "googleVoidedPurchases" })
            #expect(voided["granted"] as? Int == 2)
            #expect(voided["app"] as? String == "demo-android")
            let truth = try await client.send("GET", admin.appendingPathComponent("truth/refunds"))
            #expect(try JSONDecoder().decode(GroundTruth.self, from: truth.body) == sim.groundTruth())
            let page = try await client.send(
                "GET",
                admin.appendingPathComponent("truth/subscriptions").appending(queryItems: [
                    URLQueryItem(name: "offset", value: "10"), URLQueryItem(name: "limit", value: "5"),
                ]))
            let subscriptions = try #require(try page.json["subscriptions"] as? [[String: Any]])
            #expect(subscriptions.count <= 5)
            #expect(try page.json["total"] as? Int == sim.spec.subscriptions)
        }
    }

    @Test("init's files load back, and the storerecon.yaml passes storerecon's own configuration loader")
    func directoryRoundTrip() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storesim-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let keys = try #require(TestKeys.shared)
        let spec = ScenarioSpec(seed: 31, subscriptions: 10)
        let directory = SimulatorDirectory(path: path)
        try directory.write(spec: spec, keys: keys, settings: .init(port: 9123))
        let (loadedSpec, loadedKeys, settings) = try directory.load()
        #expect(loadedSpec == spec)
        #expect(settings.port == 9123)
        #expect(loadedKeys.appStoreKey.keyId == keys.appStoreKey.keyId)
        #expect(loadedKeys.serviceAccount.clientEmail == keys.serviceAccount.clientEmail)
        #expect(loadedKeys.chain.rootDER == keys.chain.rootDER)
        let configuration = try ConfigurationLoader(environment: [:]).load(path: path + "/storerecon.yaml")
        let apple = try #require(configuration.apps.first { $0.platform == .apple })
        #expect(apple.baseURL == "http://127.0.0.1:9123")
        #expect(apple.sandboxBaseURL == "http://127.0.0.1:9123/sandbox")
        #expect(apple.keyId == keys.appStoreKey.keyId)
        #expect(apple.rootCertificates == [path + "/SimulatorRootCA.der"])
        let google = try #require(configuration.apps.first { $0.platform == .google })
        #expect(google.tokenURL == "http://127.0.0.1:9123/token")
        // The financial reports the simulator serves: Apple app 0's vendor number, Google app 1's bucket, the one key.
        #expect(apple.fetchesPayouts && google.fetchesPayouts)
        #expect(apple.vendorNumber == "80000000" && apple.connectBaseURL == "http://127.0.0.1:9123")
        #expect(apple.connectKeyId == keys.appStoreKey.keyId && apple.connectIssuerId == keys.appStoreKey.issuerId)
        #expect(apple.connectPrivateKeyFile == path + "/AuthKey_\(keys.appStoreKey.keyId).p8")
        #expect(google.earningsBucket == "pubsite_prod_rev_1000000001")
        #expect(google.storageBaseURL == "http://127.0.0.1:9123")
        #expect(configuration.products["com.example.premium.monthly"]?.priceMilli == 9990)
        let serviceAccount =
            try JSONSerialization.jsonObject(
                with: try Data(contentsOf: URL(fileURLWithPath: path + "/play-sa.json"))) as? [String: Any]
        #expect(serviceAccount?["token_uri"] as? String == "http://127.0.0.1:9123/token")
        // `serve` on another port changes the URLs and keeps what the operator added (as scripts/demo does).
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "/storerecon.yaml"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("sync: { appleSweepCustomers: 100 }\n".utf8))
        try handle.close()
        try directory.writeEndpoints(spec: spec, keys: keys, settings: settings, port: 9200, replacing: 9123)
        let rewritten = try ConfigurationLoader(environment: [:]).load(path: path + "/storerecon.yaml")
        #expect(rewritten.apps.first { $0.platform == .google }?.baseURL == "http://127.0.0.1:9200")
        #expect(rewritten.apps.first { $0.platform == .apple }?.sandboxBaseURL == "http://127.0.0.1:9200/sandbox")
        #expect(rewritten.sync.appleSweepCustomers == 100, "the operator's edit was lost")
        #expect(rewritten.apps.first { $0.platform == .apple }?.connectBaseURL == "http://127.0.0.1:9200")
        #expect(rewritten.apps.first { $0.platform == .google }?.storageBaseURL == "http://127.0.0.1:9200")
        // Without them (`init --no-financial-reports`, as the benchmarks run), no app fetches reports.
        let bare = SimulatorDirectory(path: path + "/bare")
        try bare.write(spec: spec, keys: keys, settings: .init(port: 9123), financialReports: false)
        let plain = try ConfigurationLoader(environment: [:]).load(path: path + "/bare/storerecon.yaml")
        #expect(plain.apps.count == 2 && plain.apps.allSatisfy { !$0.fetchesPayouts })
    }
}
