import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// `storerecon run refund-requests` for a Google app: pulls storerecon's own Pub/Sub subscription on the app's RTDN
/// topic (`rtdnSubscription`), stores every message, then acknowledges it; a `pendingRefundReviewNotification` is a
/// request, decided by the app's rules and answered with `orders.reviewrefund` before its 24-hour deadline. A voided
/// purchase is recorded in the ledger at once and a subscription change queued for the next recheck
/// (`GoogleRefundRequests+Notices`).
///
/// Delivery is at least once: a message is stored by its message id (and a review by its token) before it is
/// acknowledged, so a redelivered or duplicated message, or one delivered again because the run stopped between
/// storing and acknowledging, is the same request, answered at most once.
public struct GoogleRefundRequests: Sendable {
    /// Messages asked for per pull.
    static let pullSize = 100
    /// Pulls per run at most (a backlog is read over several runs).
    static let maxPulls = 200

    let app: AppConfig
    let play: PlayDeveloperClient
    let pubsub: PlayDeveloperClient
    let requests: RefundRequestStore
    let decider: RefundRequestDecider
    let ledger: RefundLedger

    /// Creates the job for one Google app: `play` answers, `pubsub` reads the subscription; `prices` estimate a
    /// voided purchase's refund until the Orders API says (as the voided sync's).
    public init(
        app: AppConfig, play: PlayDeveloperClient, pubsub: PlayDeveloperClient,
        prices: ConfiguredPrices = ConfiguredPrices()
    ) {
        self.app = app
        self.play = play
        self.pubsub = pubsub
        requests = RefundRequestStore(appId: app.id)
        ledger = RefundLedger(appId: app.id, prices: prices)
        decider = RefundRequestDecider(rules: app.refundRequests ?? RefundRequestRules())
    }

    /// Runs the job: pull and store; read the open requests' orders (``GoogleReviewOrders``), decide and answer;
    /// then read the outcome of the reviews that are over. A pull that fails (Pub/Sub refusing or down) does not
    /// keep the reviews already stored from their answers: they are answered, then the pull's error is thrown.
    /// - Throws: `QuotaError`, `PlayAPIError`, `PostgresError`, or `ReconcilerError` when Google refused answers.
    public func run(in environment: JobEnvironment) async throws {
        try RefundRequestStore.planStatementsOnce(on: environment.connection)
        try requests.closeInterrupted(in: environment)
        var pullFailure: (any Error)?
        if let subscription = app.rtdnSubscription {
            do {
                try await pullAll(subscription, in: environment)
            } catch  where !environment.shutdown.isRequested && !Task.isCancelled {
                environment.logger.error(
                    "reading the RTDN subscription failed; answering the reviews already stored first: \(error)")
                pullFailure = error
                if let error = error as? PlayAPIError, error.code == .notFound {
                    pullFailure = ReconcilerError(
                        .configuration,
                        "apps[\(app.id)].rtdnSubscription: Pub/Sub has no subscription \(subscription): create it on "
                            + "the app's RTDN topic (Runbook.md, \"The Pub/Sub subscription\")")
                }
            }
        } else {
            environment.logger.warning(
                "apps[\(app.id)].rtdnSubscription is not set: Google's refund reviews are not read")
        }
        let orders = GoogleReviewOrders(app: app, play: play, requests: requests)
        try await orders.describeOpen(in: environment)
        try await answerer.answerOpen(in: environment)
        try await orders.decideEnded(in: environment)
        if let pullFailure { throw pullFailure }
        let refused = environment.counters["answers_failed"]
        if refused > 0 {
            throw ReconcilerError(.failed, "Google refused \(refused) answers (see the lines above; recorded failed)")
        }
    }

    /// Pulls until the subscription is empty: each batch is stored in one transaction, then acknowledged. A dry run
    /// acknowledges nothing (the messages are delivered again after their ack deadline).
    func pullAll(_ subscription: String, in environment: JobEnvironment) async throws {
        let packageName = app.packageName ?? ""
        for _ in 0..<Self.maxPulls {
            try environment.checkShutdown()
            let received = try await pubsub.pull(subscription: subscription, maxMessages: Self.pullSize)
            guard !received.isEmpty else { return }
            environment.counters.add("messages", received.count)
            let messages = received.map {
                RTDNMessage(
                    messageId: $0.message.messageId, data: $0.message.data, publishTime: $0.message.publishTime,
                    packageName: packageName)
            }
            if environment.dryRun { return }
            let recorded = try environment.connection.transaction { connection in
                try intake.store(messages, in: environment, on: connection)
            }
            try settleRecorded(recorded, in: environment)
            try await pubsub.acknowledge(subscription: subscription, ackIds: received.map(\.ackId))
        }
    }

    /// What stores a pull's messages and acts on them.
    var intake: RTDNIntake { RTDNIntake(appId: app.id, requests: requests, ledger: ledger) }

    /// The shared decide-and-send loop, sending with `orders.reviewrefund`.
    var answerer: RefundRequestAnswerer {
        let (play, packageName) = (play, app.packageName ?? "")
        return RefundRequestAnswerer(requests: requests, decider: decider) { json, open in
            do {
                try await play.reviewRefund(packageName: packageName, orderId: open.request.transactionId, body: json)
                return .answered
            } catch let error as PlayAPIError where Self.isRefusal(error) {
                return .refused(code: error.googleStatus ?? "http_\(error.httpStatus ?? 0)", message: error.message)
            } catch let error as PlayAPIError where error.code == .serverError || error.code == .transport {
                // Google may or may not have it; it keeps the first answer to a review, so sending again is safe.
                let code = error.httpStatus.map { "http_\($0)" } ?? error.code.rawValue
                return .unreached(code: code, message: error.message)
            }
        }
    }

    /// A 400, 404 or 409: Google read the answer and refused it.
    static func isRefusal(_ error: PlayAPIError) -> Bool {
        [400, 404, 409, 412].contains(error.httpStatus ?? 0)
    }
}
