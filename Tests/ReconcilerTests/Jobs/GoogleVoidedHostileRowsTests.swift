import Foundation
import PlayDeveloperAPI
import Postgres
import StoreHTTP
import StoreSimulator
import Synchronization
import TestSupport
import Testing

@testable import Ledger
@testable import Reconciler

/// Voided rows with hostile identifiers, through the real HTTP client and the real PostgreSQL upsert: what
/// PostgreSQL can hold is stored exactly (columns and JSON); what it cannot (NUL, `\u0000`, times beyond 9999) is
/// refused row by row with a reason, and the rest of the page and the window still land. (An unpaired surrogate
/// escape never gets that far: JSONDecoder refuses the page as malformed JSON.)
@Suite("Google voided sync: hostile rows", .serialized)
struct GoogleVoidedHostileRowsTests {
    static let spec = ScenarioSpec(
        seed: 43, subscriptions: 1500, oneTimePurchases: 500, refunds: 2500, historyDays: 30, futureDays: 1)

    /// A voided row as Google writes it, with room for hostile values.
    struct Row: Encodable {
        var kind = "androidpublisher#voidedPurchase"
        var purchaseToken: String
        var orderId: String?
        var purchaseTimeMillis = "1788000000123"
        var voidedTimeMillis = "1789000000456"
        var voidedSource = "1"
        var voidedReason = "2"
        var developerPayload: String?
    }

    /// The real transport; the first voided page gets `rows` spliced in as JSON text (JSONEncoder's, so no other
    /// JSON library touches the hostile strings on their way).
    final class HostileRowsTransport: HTTPTransport {
        let base = CurlTransport()
        let rows: String
        let injected = Mutex(false)

        init(rows: [Row]) throws {
            self.rows = String(decoding: try JSONEncoder().encode(rows).dropFirst().dropLast(), as: UTF8.self)
        }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            var response = try await base.send(request)
            guard request.url.path.hasSuffix("/voidedpurchases"), response.status == 200,
                injected.withLock({ done in
                    defer { done = true }; return !done
                })
            else { return response }
            let text = String(decoding: response.body, as: UTF8.self)
            let marker = try #require(text.range(of: #""voidedPurchases":["#), "no rows in the first page")
            response.body = Data((text[..<marker.upperBound] + rows + "," + text[marker.upperBound...]).utf8)
            return response
        }
    }

    /// Each hostile row that fits is stored exactly: its order id, its token as the original id, and both in the
    /// JSON payload.
    static func expectStoredExactly(_ fits: [(order: String, token: String)], _ harness: JobHarness) throws {
        let rows = try harness.connection().query(
            """
            SELECT order_id, original_id, payload->>'orderId' AS json_order, payload->>'purchaseToken' AS json_token
            FROM refund WHERE platform = 'google'
            """)
        var byOrder: [String: (String, String, String)] = [:]
        for row in rows {
            byOrder[try row.decode("order_id")] = (
                try row.decode("original_id"), try row.decode("json_order"), try row.decode("json_token")
            )
        }
        for (order, token) in fits {
            let found = try #require(byOrder[order], "hostile orderId \(order.debugDescription.prefix(60)) lost")
            #expect(found.0 == token && found.1 == order && found.2 == token)
        }
    }

    @Test func storableRowsRoundTripAndUnstorableOnesAreRefusedByName() async throws {
        var input = HostileInput(seed: 0xB0B)
        var hostile: [(order: String, token: String)] = []
        while hostile.count < 40 {
            let order = input.hostileString(allowNUL: false, maxRun: 3000)
            guard !hostile.contains(where: { $0.order == order }) else { continue }
            hostile.append((order, input.hostileString(allowNUL: false, maxRun: 3000)))
        }
        let storable = hostile.map { Row(purchaseToken: $0.token, orderId: $0.order) }
        let unstorable = [
            Row(purchaseToken: "t-nul-order", orderId: "GPA.nul\0-order"),
            Row(purchaseToken: "t\0nul", orderId: "GPA.nul-token"),
            Row(purchaseToken: "t-nul-elsewhere", orderId: "GPA.nul-elsewhere", developerPayload: "a\0b"),
            Row(purchaseToken: "t-year", orderId: "GPA.year-99999", voidedTimeMillis: "3000000000000000"),
        ]
        // Ids longer than the ledger takes are quarantined like the rows PostgreSQL cannot hold.
        let fits = hostile.filter {
            $0.order.count <= LedgerLimits.maxOrderIdLength && !$0.token.isEmpty
                && $0.token.count <= LedgerLimits.maxTokenLength
        }
        let transport = try HostileRowsTransport(rows: storable + unstorable)
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvhostile"))
            let truth = harness.firstWindowTruth(now: harness.stores.now())
            let result = try await harness.googleVoided(transport: transport)
            // A store's data never stops a job: the odd rows are set aside, everything else lands, exit 0.
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let odd = unstorable.count + hostile.count - fits.count
            #expect(result.counts["quarantined"] == odd)
            let quarantined: Int = try harness.connection().query(
                "SELECT count(*) AS n FROM quarantine WHERE job = 'google_voided' AND resolved_at IS NULL")[0]
                .decode("n")
            #expect(quarantined == odd)
            // The window drained: the page with the refused rows did not hold the checkpoint back.
            let checkpoint = try harness.checkpoint()
            #expect(checkpoint.pageToken == nil && checkpoint.highWater != nil)
            let stored = try harness.storedVoids()
            #expect(stored.isSuperset(of: truth))
            #expect(stored.count == truth.count + fits.count)
            try Self.expectStoredExactly(fits, harness)
            // A rerun finds nothing new and stores nothing twice.
            let rerun = try await harness.googleVoided(transport: ScriptedTransport { _ in })
            #expect(rerun.exitCode == 0, "\(rerun.error ?? "")")
            #expect(try harness.storedVoids() == stored)
            let again: Int = try harness.connection().query("SELECT count(*) AS n FROM quarantine")[0].decode("n")
            #expect(again == odd, "a row met again is the same quarantined row")
        }
    }

    @Test func eachUnstorableRowIsNamedByItsField() throws {
        func reason(_ json: String) throws -> String? {
            let page = try VoidedPurchasesListResponse(json: Data(#"{"voidedPurchases":[\#(json)]}"#.utf8))
            return RefundRecord.unstorableReason(page.voidedPurchases[0])
        }
        let base = #""purchaseToken":"t","voidedTimeMillis":"1789000000456","orderId":"GPA.1""#
        #expect(try reason("{\(base)}") == nil)
        let token = #""purchaseToken":"t","voidedTimeMillis":"1789000000456""#
        #expect(try reason(#"{\#(token),"orderId":"a\\u0000b"}"#, ) == nil)
        #expect(try reason(#"{\#(token),"orderId":"\ud83d\ude00 \"\\ \u00e9"}"#) == nil)
        #expect(try reason(#"{\#(token),"orderId":"a\u0000b"}"#)?.hasPrefix("orderId contains a NUL byte") == true)
        #expect(
            try reason(#"{"purchaseToken":"t\u0000","voidedTimeMillis":"1","orderId":"GPA.1"}"#)?.hasPrefix(
                "purchaseToken contains a NUL byte") == true)
        #expect(try reason(#"{\#(base),"x":"\u0000"}"#)?.contains(#"\u0000, which PostgreSQL jsonb"#) == true)
        #expect(
            try reason(#"{"purchaseToken":"t","voidedTimeMillis":"-1","orderId":"GPA.1"}"#)?.hasPrefix(
                "voidedTimeMillis -1") == true)
        #expect(try reason(#"{\#(token)}"#)?.hasPrefix("orderId: missing") == true)
        #expect(
            try reason(#"{\#(token),"orderId":"\#(String(repeating: "9", count: 500))"}"#)?.hasPrefix(
                "orderId: 500 characters") == true)
        #expect(
            try reason(#"{\#(base),"purchaseTimeMillis":"253402300800000"}"#)?.hasPrefix("purchaseTimeMillis") == true)
        for lone in [#"\ud800"#, #"\udc00"#, #"\ud800x"#, #"\ud800\u0041"#] {
            let text = #"{\#(token),"orderId":"\#(lone)"}"#
            if let page = try? VoidedPurchasesListResponse(json: Data(#"{"voidedPurchases":[\#(text)]}"#.utf8)),
                !page.voidedPurchases.isEmpty
            {
                #expect(
                    RefundRecord.unstorableReason(page.voidedPurchases[0])?.contains("unpaired surrogate")
                        == true,
                    "\(lone)")
            }
        }
    }
}
