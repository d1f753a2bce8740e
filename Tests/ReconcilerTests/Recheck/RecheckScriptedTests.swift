import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// A store that answers what the test says: for answers the simulator cannot be made to send.
struct ScriptedStatusSource: SubscriptionStatusSource {
    let answers: [String: StatusReading]

    func read(_ subscription: StoredSubscription, now: Date) async throws -> StatusReading {
        answers[subscription.storeId] ?? .badAnswer("no scripted answer")
    }
}

@Suite("Recheck with scripted answers: unknown states, missing line items, replaced tokens")
struct RecheckScriptedTests {
    static let spec = ScenarioSpec(seed: 5, subscriptions: 10, oneTimePurchases: 0, refunds: 0)

    func run(_ harness: RecheckHarness, app: AppConfig, _ answers: [String: StatusReading]) async throws
        -> JobRunner.Result
    {
        let configuration = harness.stores.configuration
        return try await harness.jobs.runner().run(job: ExpiryRecheck.job, app: app, waitForLock: false) {
            try await ExpiryRecheck(
                app: app, configuration: configuration, options: ExpiryRecheck.Options(configuration.recheck),
                source: ScriptedStatusSource(answers: answers)
            ).run(in: $0)
        }
    }

    /// A recheck harness over the scenario, without store limits, and its Google app.
    func withHarness(_ prefix: String, _ body: (RecheckHarness, AppConfig) async throws -> Void) async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try RecheckHarness(simulator, prefix: prefix)
            try await body(harness, harness.stores.app(.google))
        }
    }

    func insert(
        _ harness: RecheckHarness, app: String, _ storeId: String, state: String = "active",
        expiresIn: TimeInterval = 3600
    ) throws {
        let now = harness.stores.now()
        try harness.jobs.connection().execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, state, expires_at, expiry_changed_at, auto_renew)
            VALUES ($1, $2, 'com.example.basic.monthly', $3, $4, $4, true)
            """, [app, storeId, state, now.addingTimeInterval(expiresIn)])
    }

    @Test func unknownStatesAndBadAnswersChangeNothingButTheRawState() async throws {
        try await withHarness("recheck_scripted") { harness, app in
            for token in ["frozen", "noitems", "badtime"] { try insert(harness, app: app.id, token) }
            let before = try harness.rows()
            let noItems = SubscriptionPurchaseV2(
                lineItems: [], startTime: nil, subscriptionState: .active)
            let badTime = try? SubscriptionPurchaseV2(
                json: Data(
                    #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"p","expiryTime":"tomorrow"}]}"#
                        .utf8))
            #expect(badTime == nil, "an unparsable time fails decoding (the client reports it as a malformed answer)")
            let result = try await run(
                harness, app: app,
                [
                    "frozen": GoogleStatusInterpreter.read(
                        SubscriptionPurchaseV2(
                            lineItems: [], startTime: nil,
                            subscriptionState: SubscriptionState(rawValue: "SUBSCRIPTION_STATE_FROZEN")),
                        now: harness.stores.now()),
                    "noitems": GoogleStatusInterpreter.read(noItems, now: harness.stores.now()),
                    "badtime": .badAnswer("malformedResponse: field lineItems[0].expiryTime"),
                ])
            #expect(result.exitCode == 1)
            #expect(result.counts["unknown_state"] == 1)
            #expect(result.counts["bad_answers"] == 2)
            let after = try harness.rows()
            var frozen = try #require(before["frozen"])
            frozen.storeState = "SUBSCRIPTION_STATE_FROZEN"
            #expect(after["frozen"] == frozen, "only the raw state is kept")
            #expect(after["noitems"] == before["noitems"])
            #expect(after["badtime"] == before["badtime"])
            #expect(try harness.transitions().isEmpty)
        }
    }

    @Test func aReplacementOfAnUnknownTokenCreatesItAlreadyReplacedInTheChain() async throws {
        try await withHarness("recheck_chain") { harness, app in
            try insert(harness, app: app.id, "middle")
            try insert(harness, app: app.id, "newest", state: "unknown")
            let now = harness.stores.now()
            func active(_ product: String, linked: String) -> StatusReading {
                .observed(
                    StatusObservation(
                        state: .active, storeState: "SUBSCRIPTION_STATE_ACTIVE", entitled: true,
                        expiresAt: now.addingTimeInterval(30 * 86_400), autoRenew: true, productId: product,
                        orderId: "GPA.\(product)", linkedStoreId: linked))
            }
            let result = try await run(
                harness, app: app,
                [
                    "middle": active("com.example.basic.monthly", linked: "oldest"),
                    "newest": active("com.example.pro.monthly", linked: "middle"),
                ])
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let rows = try harness.rows()
            let oldest = try #require(rows["oldest"])
            let middle = try #require(rows["middle"])
            let newest = try #require(rows["newest"])
            #expect(oldest.state == "replaced" && !oldest.entitled && oldest.replacedBy == "middle")
            #expect(middle.state == "replaced" && !middle.entitled && middle.replacedBy == "newest")
            #expect(newest.state == "active" && newest.entitled && newest.linked == "middle")
            #expect([oldest.chainRoot, middle.chainRoot, newest.chainRoot] == ["oldest", "oldest", "oldest"])
            let kinds = try harness.transitions().map { "\($0.subscriptionId):\($0.kind)" }
            #expect(kinds.contains("\(middle.id):replaced"))
            #expect(kinds.contains("\(newest.id):upgrade"), "basic (tier 1) to pro (tier 3) through a new token")
        }
    }

    /// A successor that names a token the stores never answered for yet (state `unknown`) reaches it first: the old
    /// token stops granting and joins the chain, but its state and its one transition wait for its own answer, so the
    /// log reads as it does when the old token is answered first (a crash between the two once left an extra
    /// `changed` row behind a `replaced` one without the old token's order).
    @Test func aSuccessorAnsweredFirstLeavesTheOldTokensFirstTransitionToItsOwnAnswer() async throws {
        try await withHarness("recheck_unanswered") { harness, app in
            // The old token's expiry lies far outside the recheck window: only its flag makes it due.
            try insert(harness, app: app.id, "older", state: "unknown", expiresIn: 90 * 86_400)
            try insert(harness, app: app.id, "newer", state: "unknown")
            let now = harness.stores.now()
            let newer = StatusObservation(
                state: .active, storeState: "SUBSCRIPTION_STATE_ACTIVE", entitled: true,
                expiresAt: now.addingTimeInterval(30 * 86_400), autoRenew: true, productId: "com.example.basic.monthly",
                orderId: "GPA.newer", linkedStoreId: "older")
            let first = try await run(harness, app: app, ["newer": .observed(newer)])
            #expect(first.exitCode == 0, "\(first.error ?? "")")
            let marked = try #require(try harness.rows()["older"])
            #expect(marked.state == "unknown" && !marked.entitled && marked.replacedBy == "newer")
            #expect(try harness.transitions().filter { $0.subscriptionId == marked.id }.isEmpty)
            let older = StatusObservation(
                state: .expired, storeState: "SUBSCRIPTION_STATE_EXPIRED", entitled: false,
                expiresAt: now.addingTimeInterval(-86_400), autoRenew: false, productId: "com.example.basic.monthly",
                orderId: "GPA.older")
            let second = try await run(harness, app: app, ["older": .observed(older)])
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            let answered = try #require(try harness.rows()["older"])
            #expect(answered.state == "replaced" && !answered.entitled && answered.replacedBy == "newer")
            let log = try harness.transitions().filter { $0.subscriptionId == marked.id }
            #expect(log.map { "\($0.oldState ?? "-")>\($0.newState):\($0.kind)" } == ["unknown>replaced:first_seen"])
        }
    }
}
