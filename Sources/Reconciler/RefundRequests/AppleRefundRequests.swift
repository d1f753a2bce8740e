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
    /// The notification types the job reads: the requests, then their outcomes.
    static let types: [NotificationTypeV2] = [.consumptionRequest, .refund, .refundDeclined]
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

    /// Runs the job: the answers go out while Notification History is still being read (a child task reads and
    /// verifies the pages ahead, the requests that can still be answered first; this task stores each page as it
    /// arrives and answers the requests stored so far, nearest deadline first, between groups); then the outcomes.
    /// - Throws: `QuotaError`, `AppStoreServerAPIError` (a 401 at once), `PostgresError`, or `ReconcilerError` when
    ///   payloads failed verification or the store refused answers (after everything else is done).
    public func run(in environment: JobEnvironment) async throws {
        try RefundRequestStore.planStatementsOnce(on: environment.connection)
        let read = try Self.types.map {
            try window($0, in: environment)
        }
        let windows = read.map(\.0)
        let chains = Dictionary(uniqueKeysWithValues: read.map { ($0.0.type.rawValue, $0.1) })
        let shared = environment.shared
        try await withReadAhead { feed in
            try await readHistory(windows, shared: shared, feed: feed)
        } consume: { queue in
            // The first page is on its way meanwhile: a claim left by a crashed run is closed before any answer.
            try requests.closeInterrupted(in: environment)
            let quarantineOpen = try Quarantine.openCounts(app: app.id, on: environment.connection).contains {
                $0.job == QuarantinedRow.Job.appleRefundRequests.rawValue
            }
            var intake = AppleHistoryIntake(job: self, queue: queue, chains: chains, quarantineOpen: quarantineOpen)
            try await answerer.answerOpen(in: environment, finder: &intake)
            try await intake.storeRest(in: environment)
        }
        if !environment.dryRun {
            environment.counters.add("outcomes", try requests.appleOutcomesFromLedger(on: environment.connection))
        }
        let failed = environment.counters["verification_failed"]
        if failed > 0 {
            throw ReconcilerError(
                .failed, "\(failed) notifications failed verification and were quarantined (see the lines above)")
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
            } catch let error as AppStoreServerAPIError {
                guard let result = Self.result(of: error) ?? Self.unreached(error) else { throw error }
                return result
            }
        }
    }

    /// "Not a supported in-app purchase type": developers report it for purchases Apple documents as answerable
    /// (non-renewing subscriptions, in 2026).
    static let unsupportedTypeCode: Int64 = 4_000_047

    /// What an error of Send Consumption Information says of the answer: a 4xx other than 401 and 429 is Apple
    /// having read and refused it (sending it again would not help), `not_supported` for an unsupported purchase
    /// type, unless Apple calls it retryable (its "not found, retryable" codes: asked again next run); nil for any
    /// other error (the call did not reach Apple, or will not until the run is fixed).
    static func result(of error: AppStoreServerAPIError) -> SendResult? {
        guard let status = error.httpStatus, (400..<500).contains(status), status != 401, status != 429 else {
            return nil
        }
        let code = error.apiErrorCode.map { String($0.rawValue) } ?? "http_\(status)"
        if error.isRetryable { return .later(code: code, message: error.message) }
        if error.apiErrorCode?.rawValue == unsupportedTypeCode {
            return .unsupported(code: code, message: error.message)
        }
        return .refused(code: code, message: error.message)
    }

    /// An error after which Apple may or may not have the answer: a server error or a transport failure, once the
    /// client's retries are spent (``SendResult/unreached(code:message:)``); nil for any other.
    static func unreached(_ error: AppStoreServerAPIError) -> SendResult? {
        if error.code == .transport { return .unreached(code: "transport", message: error.message) }
        guard let status = error.httpStatus, status >= 500 else { return nil }
        let code = error.apiErrorCode.map { String($0.rawValue) } ?? "http_\(status)"
        return .unreached(code: code, message: error.message)
    }

    /// The window one notification type is read over: from its checkpoint less the overlap (a first run: a day
    /// back; never past Apple's retention) to now, with the chain's checkpoint. `CONSUMPTION_REQUEST` reads the
    /// requests that can still be answered (Apple's 12 hours) first.
    func window(
        _ type: NotificationTypeV2, in environment: JobEnvironment
    ) throws -> (HistoryWindow, AppleHistoryIntake.Chain) {
        let checkpoint = try SyncCheckpoint.load(
            job: "\(Self.job):\(type.rawValue)", app: app.id, on: environment.connection)
        let now = environment.now()
        let oldest = now.addingTimeInterval(-AppleRefundSync.retention(environment: StoreClients.appleEnvironment(app)))
        let overlap = TimeInterval(configuration.sync.appleOverlap.seconds)
        let start = max(
            oldest,
            checkpoint.highWater.map { $0.addingTimeInterval(-overlap) } ?? now.addingTimeInterval(-Self.firstLookBack))
        return (
            HistoryWindow(
                type: type, start: start, end: now,
                answerableFrom: type == .consumptionRequest
                    ? now.addingTimeInterval(-RequestingStore.apple.answerWindow) : nil),
            AppleHistoryIntake.Chain(checkpoint: checkpoint, end: now)
        )
    }

    /// Stores one page: new requests, or the outcomes `REFUND` / `REFUND_DECLINED` say, in one statement.
    /// Returns how many requests were new.
    func storePage(
        _ verified: [(VerifiedNotification, VerifiedTransaction)], type: NotificationTypeV2, runId: Int64?,
        counters: JobCounters, on connection: PostgresConnection
    ) throws -> Int {
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
        return added
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
            currency: payload.price == nil ? nil : payload.currency?.uppercased(),
            appTransactionId: payload.appTransactionId.flatMap { $0.isEmpty ? nil : $0 })
    }
}
