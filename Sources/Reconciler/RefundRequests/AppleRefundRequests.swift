import AppStoreServerAPI
import Foundation
import Ledger
import Logging
import Postgres
import RateLimiting

/// `storerecon run refund-requests` for an Apple app: finds `CONSUMPTION_REQUEST` notifications in Notification
/// History (from this job's own checkpoint less `sync.appleOverlap`), records each request once, decides it by the
/// app's rules and answers with Send Consumption Information v2 before its 12-hour deadline; `REFUND` and
/// `REFUND_DECLINED` notifications then join the store's outcome to the request, and a refund the ledger has of the
/// transaction since the request (one whose notification this job did not see) makes it `refunded` too.
public struct AppleRefundRequests: Sendable {
    /// The job's name (locks, `job_run`).
    public static let job = "refund_requests"
    /// How far back a first run looks: a request older than Apple's 12 hours can no longer be answered.
    static let firstLookBack: TimeInterval = 24 * 3600
    /// Open requests decided in one run at most (the nearest deadlines first).
    static let batch = 5000

    let app: AppConfig
    let configuration: Configuration
    let access: AppleStoreAccess
    let requests: RefundRequestStore
    let decider: RefundRequestDecider

    /// Creates the job for one Apple app.
    public init(app: AppConfig, configuration: Configuration, access: AppleStoreAccess) {
        self.app = app
        self.configuration = configuration
        self.access = access
        requests = RefundRequestStore(appId: app.id)
        decider = RefundRequestDecider(rules: app.refundRequests ?? RefundRequestRules())
    }

    /// Runs the job: discovery, answers, outcomes.
    /// - Throws: `QuotaError`, `AppStoreServerAPIError` (a 401 at once), `PostgresError`, or `ReconcilerError` when
    ///   payloads failed verification or the store refused answers (after everything else is done).
    public func run(in environment: JobEnvironment) async throws {
        try requests.closeInterrupted(in: environment)
        try await discover(.consumptionRequest, in: environment)
        try await answerer.answerOpen(in: environment)
        try await discover(.refund, in: environment)
        try await discover(.refundDeclined, in: environment)
        if !environment.dryRun {
            environment.counters.add("outcomes", try requests.appleOutcomesFromLedger(on: environment.connection))
        }
        let failed = environment.counters["verification_failed"]
        if failed > 0 {
            throw ReconcilerError(
                .failed, "\(failed) notifications failed verification and were not stored (see the lines above)")
        }
        let refused = environment.counters["answers_failed"]
        if refused > 0 {
            throw ReconcilerError(.failed, "Apple refused \(refused) answers (see the lines above; recorded failed)")
        }
    }

    /// The shared decide-and-send loop, sending with Send Consumption Information v2.
    var answerer: RefundRequestAnswerer {
        let client = access.client
        return RefundRequestAnswerer(requests: requests, decider: decider) { json, open in
            do {
                try await client.sendConsumptionInformation(transactionId: open.request.transactionId, body: json)
                return .answered
            } catch let error as AppStoreServerAPIError where Self.isRefusal(error) {
                let code = error.apiErrorCode.map { String($0.rawValue) } ?? "http_\(error.httpStatus ?? 0)"
                return .refused(code: code, message: error.message)
            }
        }
    }

    /// A 4xx other than 401 and 429: Apple read the answer and refused it (sending it again would not help).
    static func isRefusal(_ error: AppStoreServerAPIError) -> Bool {
        guard let status = error.httpStatus else { return false }
        return (400..<500).contains(status) && status != 401 && status != 429
    }

    /// Pages one notification type from its checkpoint less the overlap to now, storing each page's requests or
    /// outcomes; the checkpoint moves to the window's end after the last page, and not at all past a page with a
    /// payload that failed verification.
    func discover(_ type: NotificationTypeV2, in environment: JobEnvironment) async throws {
        let job = "\(Self.job):\(type.rawValue)"
        var checkpoint = try SyncCheckpoint.load(job: job, app: app.id, on: environment.connection)
        let now = environment.now()
        let oldest = now.addingTimeInterval(-AppleRefundSync.retention(environment: StoreClients.appleEnvironment(app)))
        let overlap = TimeInterval(configuration.sync.appleOverlap.seconds)
        let start = max(
            oldest,
            checkpoint.highWater.map { $0.addingTimeInterval(-overlap) } ?? now.addingTimeInterval(-Self.firstLookBack))
        var chain = PageChain(
            app: app.id, api: .appleNotificationHistory, name: "\(type.rawValue) notifications", startingAt: nil,
            maximumPages: PageChain.maximumApplePages)
        var token: String?
        var clean = true
        repeat {
            try environment.checkShutdown()
            let request = NotificationHistoryRequest(startDate: start, endDate: now, notificationType: type)
            let page = try await access.client.notificationHistory(
                request, paginationToken: token, purpose: .incremental
            ).page
            token = try chain.follow(page.hasMore ? page.paginationToken : nil, rows: page.notificationHistory.count)
            var verified: [(VerifiedNotification, VerifiedTransaction)] = []
            for item in page.notificationHistory {
                guard let signed = item.signedPayload else { continue }
                if let pair = await verify(signed, in: environment) { verified.append(pair) } else { clean = false }
            }
            environment.counters.add("notifications", page.notificationHistory.count)
            if environment.dryRun { continue }
            if token == nil, clean {
                checkpoint.highWater = now
            }
            try environment.connection.transaction { connection in
                try storePage(
                    verified, type: type, runId: environment.runId, counters: environment.counters, on: connection)
                if token == nil, clean { try checkpoint.save(on: connection) }
            }
        } while token != nil
    }

    /// Verifies a notification and its transaction as the refund sync does; a failure is logged and counted.
    func verify(_ signed: String, in environment: JobEnvironment) async -> (VerifiedNotification, VerifiedTransaction)?
    {
        do {
            let verifier = try access.verifier(for: StoreClients.appleEnvironment(app))
            let notification = try await verifier.verifyNotification(signed)
            guard let inner = notification.payload.data?.signedTransactionInfo else {
                throw ReconcilerError(.failed, "the notification carries no signedTransactionInfo")
            }
            let transactionVerifier = try access.verifier(
                for: notification.payload.data?.environment ?? StoreClients.appleEnvironment(app))
            return (notification, try await transactionVerifier.verifyTransaction(inner))
        } catch {
            environment.counters.add("verification_failed")
            environment.logger.error(
                "notification \(AppleRefundSync.notificationKey(signed)): rejected, not stored: \(error)")
            return nil
        }
    }

    /// Stores one page: new requests, or the outcomes `REFUND` / `REFUND_DECLINED` say, in one statement.
    private func storePage(
        _ verified: [(VerifiedNotification, VerifiedTransaction)], type: NotificationTypeV2, runId: Int64?,
        counters: JobCounters, on connection: PostgresConnection
    ) throws {
        var new: [NewRefundRequest] = []
        var outcomes: [RefundRequestStore.Outcome] = []
        for (notification, transaction) in verified {
            let payload = transaction.payload
            guard let transactionId = payload.transactionId else { continue }
            let signedAt = notification.payload.signedDate ?? payload.signedDate ?? Date()
            if type == .consumptionRequest {
                guard let uuid = notification.payload.notificationUUID else { continue }
                new.append(
                    Self.request(
                        uuid: uuid, reason: notification.payload.data?.consumptionRequestReason, payload,
                        receivedAt: signedAt))
            } else {
                outcomes.append(
                    RefundRequestStore.Outcome(
                        transactionId: transactionId, decision: type == .refund ? .refunded : .declined,
                        revocationType: payload.revocationType?.rawValue,
                        revocationMilli: payload.revocationPercentage, at: signedAt))
            }
        }
        let added = try requests.insert(new, runId: runId, on: connection).count
        if added > 0 { counters.add("requests_new", added) }
        let decided = try requests.recordOutcomes(outcomes, on: connection)
        if decided > 0 { counters.add("outcomes", decided) }
    }

    /// A request as the verified transaction describes it.
    static func request(
        uuid: String, reason: String?, _ payload: JWSTransactionDecodedPayload, receivedAt: Date
    ) -> NewRefundRequest {
        NewRefundRequest(
            store: .apple, requestId: uuid, transactionId: payload.transactionId ?? "",
            originalId: payload.originalTransactionId, productId: payload.productId,
            productType: payload.type?.rawValue,
            country: payload.storefront.flatMap { CountryCode.alpha2(fromAlpha3: $0) },
            familyShared: payload.inAppOwnershipType?.rawValue == "FAMILY_SHARED", reason: reason,
            pendingToken: nil, receivedAt: receivedAt, purchasedAt: payload.purchaseDate,
            firstPurchasedAt: payload.originalPurchaseDate, expiresAt: payload.expiresDate,
            priceNanos: payload.currency == nil ? nil : payload.price.map { $0 * 1_000_000 },
            currency: payload.price == nil ? nil : payload.currency?.uppercased())
    }
}
