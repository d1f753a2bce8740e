import AppStoreServerAPI
import Foundation
import Postgres
import RateLimiting

/// What a store said to an answer that reached it.
enum SendResult: Sendable {
    /// Taken.
    case answered
    /// Read and refused, with the store's error code: sending it again would not help.
    case refused(code: String, message: String)
    /// Read and refused because the store takes no answer for this kind of purchase (recorded `not_supported`, with
    /// the store's error code).
    case unsupported(code: String, message: String)
    /// Not taken now, and the store says to ask again later (Apple's "not found, retryable" 4040002, 4040004,
    /// 4040006, after the client's own retries): released for the next run while the deadline allows; the run goes
    /// on with the other requests.
    case later(code: String, message: String)
    /// No answer from the store after the client's retries (a server error, a timeout, a connection lost): the
    /// call may or may not have reached it. Released and sent again by the next run while the deadline allows
    /// (Google keeps the first answer to a review; Apple's PUT of the same body is the same answer); the run goes on
    /// with the other requests until ``RefundRequestAnswerer/maxUnreached`` such calls say the store is down.
    case unreached(code: String, message: String)
    /// Not taken in time: the deadline passed before the call could leave (a wait at the quota gate, a retry), or
    /// while it failed (recorded `missed`; the store was not answered after it).
    case missed
}

/// Decides a store's open requests, nearest deadline first, and sends the answers that are due with `send`: the
/// part of the job both stores share.
///
/// The requests go in groups of ``groupSize``: a group's verdicts that send nothing and the claims of those that do
/// are committed in one transaction before any of its calls; the calls then go out side by side (each through the
/// quota gate), and what the store said to each is recorded in one transaction after the last. The next group is
/// decided and claimed while the calls of up to ``groupsInFlight`` groups are out; all the database work stays on
/// the job's connection, in this task. A crash in between leaves the claims of the groups out, which the next run
/// records `failed` (`interrupted`) and never sends again.
struct RefundRequestAnswerer: Sendable {
    /// Requests decided, claimed and sent together.
    static let groupSize = 16
    /// Groups of one app whose calls may be out at once (the next group is claimed while the calls of the others
    /// are out, so that each call leaves when the quota gate lets it): at most `groupSize` x `groupsInFlight` answers
    /// of one app are in flight, and a crash leaves at most this many unanswered. 48 stays under a window of Apple's
    /// 50 a second: a 49th call out would wait at the gate for an earlier one's answer, polling its lock.
    static let groupsInFlight = 3
    /// Calls without an answer (``SendResult/unreached(code:message:)``) after which a run stops sending: one
    /// request the store fails on does not hold back the others, a store that is down stops the run (exit 75).
    static let maxUnreached = 16

    let requests: RefundRequestStore
    let decider: RefundRequestDecider
    /// Sends one body; throws when the call did not reach the store (the claim is released for the next run).
    let send: @Sendable (Data, OpenRefundRequest) async throws -> SendResult

    /// One claimed answer.
    struct Claimed: Sendable {
        var open: OpenRefundRequest
        var json: Data
        var label: String
        /// The request's deadline on this process's clock: no request of its call leaves after it
        /// (``SendDeadline``).
        var notAfter: ContinuousClock.Instant
    }

    /// Requests whose facts, earlier refunds and usage evidence are read together: one round trip for this many
    /// rather than one per group, and still read shortly before they are decided (seconds at the stores' rates).
    static let readAhead = 16 * groupSize

    /// Decides and answers the open requests, nearest deadline first, when they were all stored before.
    func answerOpen(in environment: JobEnvironment) async throws {
        var nothing = NoMoreRequests()
        try await answerOpen(in: environment, finder: &nothing)
    }

    /// Decides and answers the open requests, nearest deadline first, while `finder` stores more: before each group
    /// it stores what was found, and the open requests are read again when it stored new ones (once fewer than
    /// ``readAhead`` are left in hand); when none is left and no group is out, it waits for the next find. Each
    /// request is decided at most once per run, and at most ``AppleRefundRequests/batch`` in all. Up to
    /// ``groupsInFlight`` groups are out at once; on an error or a shutdown, the groups out are recorded before the
    /// error is rethrown.
    func answerOpen(in environment: JobEnvironment, finder: inout some RefundRequestFinder) async throws {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            var flight = AnswersInFlight()
            var unreached = 0
            var stop: (any Error)?
            do {
                try await claimAndSend(
                    finder: &finder, flight: &flight, unreached: &unreached, tasks: &tasks, in: environment)
            } catch {
                stop = error
            }
            while !flight.isEmpty {
                // The groups' tasks throw nothing: each call's outcome is in `flight`.
                _ = try? await tasks.next()
                if let error = record(flight.takeEnded(), unreached: &unreached, in: environment) {
                    stop = stop ?? error
                }
            }
            if let stop { throw stop }
        }
    }

    /// Claims groups nearest deadline first while fewer than ``groupsInFlight`` are out and sends each as it is
    /// claimed, recording the groups that ended in between; returns once every group claimed is recorded.
    /// - Throws: the first error, leaving the groups still out in `flight` (the caller records them).
    private func claimAndSend(
        finder: inout some RefundRequestFinder, flight: inout AnswersInFlight, unreached: inout Int,
        tasks: inout ThrowingTaskGroup<Void, any Error>, in environment: JobEnvironment
    ) async throws {
        var hand = OpenRequestsInHand<RefundRequestSubject>()
        var stale = true
        var more = true
        finder.whenFound(flight.wake)
        while true {
            if flight.count < Self.groupsInFlight, hand.taken.count < AppleRefundRequests.batch {
                try environment.checkShutdown()
                if more {
                    let found = try await finder.storeFound(
                        waiting: hand.isEmpty && !stale && flight.isEmpty, short: hand.count < Self.groupSize,
                        in: environment)
                    stale = stale || found.stored
                    more = found.more
                }
                // New requests come after those in hand (Apple's history is read oldest first): read again once the
                // hand runs low, not for each page of a long backlog.
                if stale, hand.count < Self.readAhead {
                    hand.replace(
                        with: try requests.open(
                            limit: AppleRefundRequests.batch, now: environment.now(), on: environment.connection))
                    stale = false
                }
                if !hand.isEmpty {
                    let group = try hand.next(Self.groupSize, ahead: Self.readAhead) { chunk in
                        try RefundRequestSubject.load(chunk, store: requests, on: environment.connection)
                    }
                    flight.send(try decideAndClaim(group, in: environment), with: send, on: &tasks)
                    continue
                }
                if more, flight.isEmpty { continue }
            }
            if flight.isEmpty { return }
            // A group's end, or a page found: either may let the next group go.
            await flight.nextChange()
            if let error = record(flight.takeEnded(), unreached: &unreached, in: environment) { throw error }
        }
    }

    /// Decides a group, then commits in one transaction the verdicts that send nothing and the claims of the
    /// answers to send; returns the answers claimed (none in a dry run).
    private func decideAndClaim(
        _ group: [(OpenRefundRequest, RefundRequestSubject)], in environment: JobEnvironment
    ) throws -> [Claimed] {
        var silent: [RefundRequestStore.Silent] = []
        var evidenceToDrop: [String] = []
        var claims: [RefundRequestStore.Claim] = []
        var claimed: [Claimed] = []
        for (open, subject) in group {
            var verdict = decider.decide(subject.decisionCase, now: environment.now())
            let label = "request \(open.request.requestId) (transaction \(open.request.transactionId))"
            if verdict.answer == .missed, let rule = open.withheldBy {
                // The rule's choice stands: the request is not counted as missed by `status`.
                (verdict.rule, verdict.preference) = (rule, .noAnswer)
            }
            guard let body = Self.toSend(open, verdict) else {
                environment.counters.add("requests_\(verdict.answer?.rawValue ?? "no_answer")")
                if verdict.answer == .missed {
                    if let rule = open.withheldBy {
                        environment.logger.info("\(label): the deadline passed unanswered, as \(rule) says (no_answer)")
                    } else {
                        environment.logger.error("\(label): the deadline \(open.deadline) passed unanswered")
                    }
                }
                silent.append(RefundRequestStore.Silent(id: open.id, verdict: verdict, facts: subject.factsJSON))
                // A request that will never be answered needs no usage evidence.
                if open.request.store == .google, verdict.answer == .missed || verdict.answer == .notSupported {
                    evidenceToDrop += Self.ids(open)
                }
                continue
            }
            if environment.dryRun {
                environment.logger.info(
                    "dry run: would answer \(label) with \(String(decoding: body.storedJSON, as: UTF8.self))")
                environment.counters.add("would_answer")
                continue
            }
            claims.append(
                RefundRequestStore.Claim(
                    id: open.id, verdict: verdict, facts: subject.factsJSON ?? Data("{}".utf8), body: body.storedJSON))
            let left = open.deadline.timeIntervalSince(environment.now())
            claimed.append(
                Claimed(open: open, json: body.json, label: label, notAfter: .now + .milliseconds(Int64(left * 1000))))
        }
        if environment.dryRun || (silent.isEmpty && claims.isEmpty) { return [] }
        let taken =
            evidenceToDrop.isEmpty
            ? try requests.recordAndClaim(silent, claims, on: environment.connection)
            : try environment.connection.transaction { connection in
                let taken = try requests.recordAndClaim(silent, claims, on: connection)
                try ConsumptionUsageEventStore.deleteUnshared(
                    ids: evidenceToDrop, app: requests.appId, now: environment.now(), on: connection)
                return taken
            }
        return claimed.filter { taken.contains($0.open.id) }
    }

    /// What to send for a request: the body of an earlier send that had no answer from the store, as it was (the
    /// store may have it, and keeps the first answer), unless the deadline passed; else the decision's body; nil
    /// when nothing is sent. A Google body is stored without its usage evidence, so this decision's goes with it.
    static func toSend(_ open: OpenRefundRequest, _ verdict: RefundRequestVerdict) -> RefundAnswerBody.Sent? {
        guard let earlier = open.unconfirmedBody, verdict.answer != .missed else {
            return verdict.body.map { RefundAnswerBody.Sent(json: $0.json, storedJSON: $0.storedJSON) }
        }
        guard open.request.store == .google,
            var google = try? JSONDecoder().decode(GoogleReviewRefundBody.self, from: earlier)
        else { return RefundAnswerBody.Sent(json: earlier, storedJSON: earlier) }
        if case .google(let decided)? = verdict.body { google.consumptionUsageEvents = decided.consumptionUsageEvents }
        return RefundAnswerBody.Sent(json: RefundAnswerBody.google(google).json, storedJSON: earlier)
    }

    /// The ids a purchase's facts and usage events may be kept under.
    static func ids(_ open: OpenRefundRequest) -> [String] {
        [open.request.transactionId] + (open.request.originalId.map { [$0] } ?? [])
    }
}
