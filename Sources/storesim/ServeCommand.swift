import ArgumentParser
import Foundation
import StoreSimulator

/// `storesim serve`: runs the simulator from a directory `storesim init` wrote, until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the stores from a directory written by storesim init, until SIGTERM or SIGINT.",
        discussion: """
            Prints the listening URL on standard output. URL layout: Google API at URL/androidpublisher/v3/..., \
            Google OAuth at URL/token, Apple production at URL/inApps/..., Apple sandbox at URL/sandbox/inApps/..., \
            admin at URL/admin/... (clock, stats, faults, quotas, scenario, truth).
            """)

    @Option(help: "Directory written by storesim init.")
    var dir: String

    @Option(help: "Port to listen on (default: the one init wrote; 0 for any, rewriting the config files).")
    var port: Int?

    @Option(help: "Simulator clock: 'wall' or 'fixed' (default: as init wrote).")
    var clock: String?

    @Option(help: "Count quota windows on the wall clock even when the simulator clock is fixed.")
    var quotaWallClock = false

    @Option(
        parsing: .singleValue,
        help: "A fault: ENDPOINT:KIND=RATE (e.g. googleVoidedPurchases:serverError=0.1); repeatable.")
    var fault: [String] = []

    @Option(help: "How long every store answer takes: 1500ms, 1.5s or 1500 (milliseconds); default 0.")
    var latency = "0"

    @Option(help: "Each answer's delay varies uniformly by up to this much either way (same units); default 0.")
    var latencyJitter = "0"

    @Option(help: "Google over-quota answers: 429 or 403.")
    var googleQuotaStatus = 429

    @Option(help: "voidedSource/voidedReason as numbers, strings or mixed.")
    var voidedEnums = "numbers"

    @Option(
        help:
            "Fraction of refund rows answered as odd data (repeated rows, unknown codes, missing optional fields, rows without orderId, wrong JSON types, oversized ids), e.g. 0.01."
    )
    var oddRows: Double = 0

    @Flag(
        help:
            "Answer the Orders API with 403 (the service account lacks the financial permission): refunds keep no store amount."
    )
    var ordersPermissionDenied = false

    func run() async throws {
        let directory = SimulatorDirectory(path: dir)
        let (spec, keys, settings) = try directory.load()
        var options = SimulatorOptions(scenario: spec)
        options.keys = keys
        options.host = settings.host
        options.port = port ?? settings.port
        switch clock ?? settings.clock {
        case "wall": options.clock = .realTime(offsetMillis: 0)
        case "fixed": options.clock = .fixed(startMillis: spec.anchorMillis)
        default: throw ValidationError("--clock: expected wall or fixed")
        }
        options.quotas.useWallClock = quotaWallClock
        guard let latencyMillis = Latency.parseMillis(latency), let jitterMillis = Latency.parseMillis(latencyJitter)
        else { throw ValidationError("--latency, --latency-jitter: expected e.g. 1500ms, 1.5s or 1500") }
        options.latency = Latency(millis: latencyMillis, jitterMillis: jitterMillis)
        options.quotas.googleStyle = googleQuotaStatus == 403 ? .forbidden : .tooManyRequests
        guard let encoding = SimulatorOptions.EnumEncoding(rawValue: voidedEnums) else {
            throw ValidationError("--voided-enums: expected numbers, strings or mixed")
        }
        options.voidedEnumEncoding = encoding
        guard (0...1).contains(oddRows) else { throw ValidationError("--odd-rows: expected a fraction from 0 to 1") }
        options.oddRows = oddRows
        options.ordersPermissionDenied = ordersPermissionDenied
        for text in fault {
            let (endpoint, kind, rate) = try parseFault(text)
            options.faults[endpoint, default: FaultSettings()].rates[kind] = rate
        }
        let written = settings.port
        try await StoreSimulator.serve(options) { simulator in
            let bound = simulator.baseURL.port ?? written
            if bound != written {
                // Said on stderr (stdout carries only the URL, for scripts): the operator's files changed.
                do {
                    try directory.writeEndpoints(
                        spec: spec, keys: keys, settings: settings, port: bound, replacing: written)
                    FileHandle.standardError.write(
                        Data(
                            ("storesim: listening on port \(bound), not \(written) as init wrote: the simulator URLs in "
                                + "\(directory.url.path)/storerecon.yaml and play-sa.json now name \(bound) "
                                + "(the rest of the files is unchanged)\n").utf8))
                } catch {
                    FileHandle.standardError.write(
                        Data(
                            ("storesim: listening on port \(bound), but \(directory.url.path)/storerecon.yaml could not "
                                + "be updated (it still names \(written)): \(error)\n").utf8))
                }
            }
            // Unbuffered, so a script waiting for the URL sees it at once.
            FileHandle.standardOutput.write(Data((simulator.baseURL.absoluteString + "\n").utf8))
        }
    }

    private func parseFault(_ text: String) throws -> (SimulatorEndpoint, FaultKind, Double) {
        let parts = text.split(separator: ":", maxSplits: 1)
        let assignment = parts.count == 2 ? parts[1].split(separator: "=", maxSplits: 1) : []
        guard parts.count == 2, assignment.count == 2, let endpoint = SimulatorEndpoint(rawValue: String(parts[0])),
            let kind = FaultKind(rawValue: String(assignment[0])), let rate = Double(assignment[1]),
            (0...1).contains(rate)
        else {
            throw ValidationError(
                "--fault \(text): expected ENDPOINT:KIND=RATE with endpoint one of "
                    + SimulatorEndpoint.allCases.map(\.rawValue).joined(separator: ", ") + " and kind one of "
                    + FaultKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return (endpoint, kind, rate)
    }
}
