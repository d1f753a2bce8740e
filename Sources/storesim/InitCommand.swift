import ArgumentParser
import Foundation
import StoreSimulator

/// `storesim init`: writes key files, the test root certificate, the scenario spec and a `storerecon.yaml`.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write keys, the test root certificate, the scenario spec and a storerecon.yaml into a directory.",
        discussion: """
            Files: AuthKey_<KEYID>.p8 and apple-key.json (App Store Connect key), play-sa.json (Google service \
            account, token_uri pointing at the simulator), SimulatorRootCA.der (trust it for Apple payloads), \
            simulator-ca/ (the signing chain), scenario.json, simulator.json, storerecon.yaml and subscriptions.csv (what \
            the app backend knows, for storerecon import subscriptions); with refund requests in the scenario, also \
            consumption.csv (the backend's facts about each request's purchase, every customer consenting, for \
            storerecon import consumption). The yaml configures the financial reports \
            the simulator serves (earningsBucket, vendorNumber and the App Store Connect key; --no-financial-reports \
            leaves them out), so storerecon sync payouts and report tie-out work as they are. The yaml and \
            play-sa.json name http://HOST:PORT; serve listens there (or rewrites both if told another port).
            """)

    @Option(help: "Directory to write into (created if missing).")
    var dir: String

    @OptionGroup var scenario: ScenarioOptions

    @Option(help: "Port written into storerecon.yaml and play-sa.json, where serve will listen.")
    var port = 8787

    @Option(help: "Address serve listens on.")
    var host = "127.0.0.1"

    @Option(help: "Simulator clock for serve: 'wall' (follows real time) or 'fixed' (starts at the anchor).")
    var clock = "wall"

    @Option(help: "database.url written into storerecon.yaml.")
    var databaseURL = "postgresql:///storerecon"

    @Flag(
        inversion: .prefixedNo,
        help: "Configure the financial reports (earningsBucket, vendorNumber, connect*) in storerecon.yaml.")
    var financialReports = true

    func run() async throws {
        guard clock == "wall" || clock == "fixed" else { throw ValidationError("--clock: expected wall or fixed") }
        let spec = try scenario.spec()
        let started = ContinuousClock.now
        let keys = try SimulatorKeys.generate(seed: spec.seed)
        let directory = SimulatorDirectory(path: dir)
        try directory.write(
            spec: spec, keys: keys,
            settings: .init(host: host, port: port, clock: clock, databaseURL: databaseURL),
            financialReports: financialReports)
        // What the app backend would export: storerecon imports it like an operator's CSV.
        try SubscriptionExport.write(spec, to: directory.url.appendingPathComponent("subscriptions.csv"))
        if spec.consumptionRequests > 0 || spec.refundReviews > 0 {
            try ConsumptionFactsExport.write(spec, to: directory.url.appendingPathComponent("consumption.csv"))
        }
        // Generating once here proves the spec is valid and gives the operator its size.
        let summary = try StoreSimulator.summarize(spec)
        print("wrote \(directory.url.path) (\(summary); \(started.duration(to: .now)))")
    }
}
