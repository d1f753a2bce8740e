import Foundation
import Postgres

extension PostgresQuotaGate {
    /// What a call in a batch comes back with.
    enum BatchAnswer: Sendable {
        /// The call's attempt, and when the batch's round trip was asked for.
        case answered(QuotaAttempt, asked: ContinuousClock.Instant)
        /// The (app, API) is blocked in this process until then.
        case blocked(until: C.Instant)
    }

    /// One attempt for one call, in a batch: joins the round trip of (app, API, purpose) that another call of this
    /// process is about to make, or leads one that the calls arriving meanwhile join; unless this process keeps a
    /// block of the (app, API) that has not ended.
    /// - Throws: as ``attempt(app:api:purpose:)``.
    nonisolated func batchedAttempt(_ key: BatchKey) async throws -> BatchAnswer {
        let now = clock.now
        let shard = local[key]
        let role = try await withCheckedThrowingContinuation { (waiter: QuotaGateLocalState<C.Instant>.Waiter) in
            if let role = shard.withLock({ $0.join(key, at: now, waiter) }) { waiter.resume(returning: role) }
        }
        switch role {
        case .answered(let attempt, let asked):
            return .answered(attempt, asked: asked)
        case .blocked(let until):
            return .blocked(until: until)
        case .lead:
            let (attempt, asked) = try await askForBatch(key)
            return .answered(attempt, asked: asked)
        }
    }

    /// Closes the batch of `key` (the calls that joined it while this one waited for the database thread) and asks
    /// for all of its calls in one round trip. Grants go in the order the calls came, the leader's first.
    private func askForBatch(_ key: BatchKey) async throws -> (attempt: QuotaAttempt, asked: ContinuousClock.Instant) {
        let (followers, exhausted) = local[key].withLock { $0.close(key) }
        let asked = ContinuousClock.now
        let results: [Result<QuotaAttempt, any Error>]
        do {
            let row = try await roundTrip(key, wanted: 1 + followers.count, exhausted: exhausted)
            // One jitter for the whole batch: its calls wake together and ask again in one round trip.
            var generator = SystemRandomNumberGenerator()
            let wait = policy.jittered(.seconds(max(0, row.waitSeconds ?? 0)), using: &generator)
            results = row.attempts(wanted: 1 + followers.count, key: key, policy: policy, wait: wait)
        } catch is CancellationError {
            // The leader was cancelled between reconnection attempts, the others were not: each asks again itself.
            for follower in followers { follower.resume(returning: .lead) }
            throw CancellationError()
        } catch {
            for follower in followers { follower.resume(throwing: error) }
            throw error
        }
        for (follower, result) in zip(followers, results.dropFirst()) {
            follower.resume(with: result.map { .answered($0, asked: asked) })
        }
        return (try results[0].get(), asked)
    }

    /// Asks `quota_acquire_batch` for `wanted` calls of `key`, and counts the answer in the statistics.
    /// - Parameter exhausted: the day this process learnt (with the database away) that the store spent, if it did.
    /// - Throws: `QuotaError` when `exhausted` is today; `PostgresError` when the database stays unreachable.
    func roundTrip(_ key: BatchKey, wanted: Int, exhausted: PacificDay?) async throws -> BatchRow {
        let limit = policy.limit(app: key.app, api: key.api)
        let windows = limit?.enforcedWindows ?? []
        let backfillCap = policy.backfillCap(of: limit)
        if let day = exhausted, day == PacificDay(containing: Date()) {
            throw QuotaError(
                app: key.app, api: key.api,
                reason: QuotaRefusal.storeExhausted.reason(day: day, cap: limit?.dailyCap, backfillCap: backfillCap))
        }
        let counts = windows.map { String($0.count) }
        // Rounded up to PostgreSQL's microsecond, so the database never enforces a shorter window.
        let lengths = windows.map { Self.microseconds(roundedUp: $0.enforcedWindow.seconds) }
        let parameters: [any PostgresEncodable] = [
            key.app, key.api.rawValue, key.purpose == .backfill, wanted, Self.arrayLiteral(counts),
            Self.arrayLiteral(lengths), limit?.dailyCap, backfillCap,
        ]
        let measure = ContinuousClock()
        let shard = local[key]
        let (row, elapsed) = try await withConnection { connection in
            let started = measure.now
            do {
                let row = try BatchRow(connection.query(Self.acquireSQL, parameters)[0])
                return (row, started.duration(to: measure.now))
            } catch {
                let elapsed = started.duration(to: measure.now)
                shard.withLock { $0.statistics.countAttempt(wanted: wanted, took: elapsed) }
                throw error
            }
        }
        shard.withLock { state in
            state.statistics.countAttempt(wanted: wanted, took: elapsed)
            state.statistics.grants += row.granted
            if row.granted < wanted, row.refusal == nil {
                state.statistics.waits += 1
                state.statistics.waited += .seconds(max(0, row.waitSeconds ?? 0))
            }
        }
        return row
    }

    /// `seconds` rounded up to the microsecond, written with six decimals (`1.500000`), as `%.6f` would write it but
    /// without `String(format:)`, which every round trip paid for.
    static func microseconds(roundedUp seconds: Double) -> String {
        let micros = Int64((max(0, seconds) * 1e6).rounded(.up))
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// `{1,2,3}`: a PostgreSQL array literal of numbers.
    static func arrayLiteral(_ numbers: [String]) -> String {
        "{" + numbers.joined(separator: ",") + "}"
    }

    static var acquireSQL: String {
        "SELECT granted, granted_at, wait_seconds, refusal, grant_day, day_used, day_used_backfill "
            + "FROM quota_acquire_batch($1, $2, $3, $4, $5::integer[], $6::double precision[], $7, $8)"
    }
}

/// One row of `quota_acquire_batch`.
struct BatchRow {
    var granted: Int
    var grantedAt: Date?
    var waitSeconds: Double?
    var refusal: String?
    var day: PacificDay
    var used: Int
    var usedBackfill: Int

    init(_ row: PostgresRow) throws {
        granted = try row.decode("granted")
        grantedAt = try row.decodeIfPresent("granted_at")
        waitSeconds = try row.decodeIfPresent("wait_seconds")
        refusal = try row.decodeIfPresent("refusal")
        let dayText: String = try row.decode("grant_day")
        guard let day = PacificDay(isoDate: dayText) else {
            throw PostgresError(
                code: .decoding, operation: "decode", message: "not a date", column: "grant_day")
        }
        self.day = day
        used = try row.decode("day_used")
        usedBackfill = try row.decode("day_used_backfill")
    }

    /// The answer for each of the `wanted` calls, in order: the first `granted` have a grant each (the day's counts
    /// as they were after that call), the rest the refusal or `wait` (by default the row's).
    func attempts(
        wanted: Int, key: BatchKey, policy: QuotaPolicy, wait: Duration? = nil
    ) -> [Result<QuotaAttempt, any Error>] {
        let backfill = key.purpose == .backfill
        var results: [Result<QuotaAttempt, any Error>] = []
        results.reserveCapacity(wanted)
        if let grantedAt {
            for index in 0..<min(granted, wanted) {
                let before = granted - 1 - index
                let grant = QuotaGrant(
                    grantedAt: grantedAt, day: day, usedToday: used - before,
                    usedBackfillToday: backfill ? usedBackfill - before : usedBackfill)
                results.append(.success(QuotaAttempt(grant: grant, wait: .zero)))
            }
        }
        let rest: Result<QuotaAttempt, any Error>
        if let refusal {
            let limit = policy.limit(app: key.app, api: key.api)
            rest = .failure(
                QuotaError(
                    app: key.app, api: key.api,
                    reason: (QuotaRefusal(rawValue: refusal) ?? .capReached).reason(
                        day: day, cap: limit?.dailyCap, backfillCap: policy.backfillCap(of: limit))))
        } else {
            rest = .success(QuotaAttempt(grant: nil, wait: wait ?? .seconds(max(0, waitSeconds ?? 0))))
        }
        while results.count < wanted { results.append(rest) }
        return results
    }
}
