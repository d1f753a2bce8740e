import Foundation
import Postgres
import StoreHTTP
import Synchronization

extension RefundRequestAnswerer {
    /// Records what the store said to each answer of the groups that ended, one transaction per group; a call that
    /// never reached the store, or had no answer from it, releases its claim for the next run. Returns the first
    /// error of those calls, or of the database, once every group is recorded (or tried); or, once `unreached` (the
    /// run's calls without an answer so far) reaches ``maxUnreached``, an error saying the store is not answering.
    func record(
        _ ended: [AnswersInFlight.Ended], unreached: inout Int, in environment: JobEnvironment
    ) -> (any Error)? {
        var stop: (any Error)?
        for group in ended {
            var finishes: [RefundRequestStore.Finish] = []
            var (released, unconfirmed): ([Int64], [Int64]) = ([], [])
            for item in group.claimed {
                // A call whose task ended without an answer may still have reached the store: never sent again.
                switch group.results[item.open.id]
                    ?? .success(.refused(code: "interrupted", message: "no answer recorded"))
                {
                case .success(.answered):
                    finishes.append(.init(id: item.open.id, answer: .answered))
                    environment.counters.add("answered")
                case .success(.refused(let code, let message)):
                    finishes.append(.init(id: item.open.id, answer: .failed, errorCode: code))
                    environment.counters.add("answers_failed")
                    environment.logger.error("\(item.label): the store refused the answer (\(code)): \(message)")
                case .success(.missed):
                    finishes.append(.init(id: item.open.id, answer: .missed))
                    environment.counters.add("requests_missed")
                    environment.logger.error(
                        "\(item.label): the deadline \(item.open.deadline) passed before the answer could leave")
                case .success(.unsupported(let code, let message)):
                    finishes.append(.init(id: item.open.id, answer: .notSupported, errorCode: code))
                    environment.counters.add("requests_not_supported")
                    environment.logger.warning(
                        "\(item.label): the store takes no answer for this purchase (\(code)): \(message)")
                case .success(.later(let code, let message)):
                    released.append(item.open.id)
                    environment.counters.add("answers_deferred")
                    environment.logger.warning(
                        "\(item.label): the store asks to be asked again later (\(code)): \(message); sent again next run"
                    )
                case .success(.unreached(let code, let message)):
                    // It may have reached the store: the next run sends this body again, not a new decision.
                    unconfirmed.append(item.open.id)
                    let limit = unanswered(item, code: code, message: message, unreached: &unreached, environment)
                    stop = stop ?? limit
                case .failure(let error):
                    released.append(item.open.id)
                    stop = stop ?? error
                }
            }
            // A body sent again keeps its place whatever became of the call: its first send may have reached the store.
            let resent = Set(group.claimed.filter { $0.open.unconfirmedBody != nil }.map(\.open.id))
            unconfirmed += released.filter(resent.contains)
            released.removeAll(where: resent.contains)
            do {
                try record(
                    finishes, released: released, unconfirmed: unconfirmed, of: group.claimed,
                    now: environment.now(), on: environment.connection)
                environment.answersSent(finishes.count)
            } catch {
                stop = stop ?? error
            }
        }
        return stop
    }

    /// Counts and logs a call without the store's answer; the error that stops the run once the run's calls so
    /// (`unreached`) reach ``maxUnreached``.
    private func unanswered(
        _ item: Claimed, code: String, message: String, unreached: inout Int, _ environment: JobEnvironment
    ) -> ReconcilerError? {
        unreached += 1
        environment.counters.add("answers_unreached")
        environment.logger.warning("\(item.label): no answer from the store (\(code)): \(message); sent again next run")
        guard unreached == Self.maxUnreached else { return nil }
        return ReconcilerError(
            .temporary,
            "\(unreached) answers had no answer from the store (the last: \(code)); the rest wait for the next run")
    }

    /// Records the finished answers and releases the rest; a Google request's usage evidence (IP addresses,
    /// locations) goes in the same transaction: all of it once sent with an answer, else (missed, refused) what no
    /// other request that may still be answered names.
    private func record(
        _ finishes: [RefundRequestStore.Finish], released: [Int64], unconfirmed: [Int64], of claimed: [Claimed],
        now: Date, on connection: PostgresConnection
    ) throws {
        let answers = Dictionary(finishes.map { ($0.id, $0.answer) }, uniquingKeysWith: { first, _ in first })
        let evidence = claimed.filter { $0.open.request.store == .google && answers[$0.open.id] != nil }
        guard !evidence.isEmpty else {
            return try requests.finishAndRelease(finishes, released: released, unconfirmed: unconfirmed, on: connection)
        }
        let sent = evidence.filter { answers[$0.open.id] == .answered }.flatMap { Self.ids($0.open) }
        let unsent = evidence.filter { answers[$0.open.id] != .answered }.flatMap { Self.ids($0.open) }
        try connection.transaction { connection in
            try requests.finishAndRelease(finishes, released: released, unconfirmed: unconfirmed, on: connection)
            try ConsumptionUsageEventStore.delete(ids: sent, on: connection)
            try ConsumptionUsageEventStore.deleteUnshared(ids: unsent, app: requests.appId, now: now, on: connection)
        }
    }
}

/// The claimed groups of one app whose calls are out: each group is one task of the job's task group, its calls
/// side by side inside it.
struct AnswersInFlight {
    /// A group whose calls all ended, with what the store said to each (by request id).
    struct Ended {
        var claimed: [RefundRequestAnswerer.Claimed]
        var results: [Int64: Result<SendResult, any Error>]
    }

    private var groups: [Int: [RefundRequestAnswerer.Claimed]] = [:]
    private var serial = 0
    private let answers = StoreAnswers()
    /// Given when a group's calls all ended, and by whoever else has news for the answerer (``wake()``).
    private let changes = Wakeup()

    /// How many groups are out.
    var count: Int { groups.count }
    /// Whether no group is out.
    var isEmpty: Bool { groups.isEmpty }

    /// Wakes the answerer waiting in ``nextChange()``; callable from any task.
    var wake: @Sendable () -> Void { { [changes] in changes.signal() } }

    /// Returns once a group's calls all ended or ``wake`` was called since the last return.
    func nextChange() async {
        await changes.wait()
    }

    /// Sends a claimed group's answers side by side in a new task of `tasks` (nothing when none was claimed).
    mutating func send(
        _ claimed: [RefundRequestAnswerer.Claimed],
        with send: @escaping @Sendable (Data, OpenRefundRequest) async throws -> SendResult,
        on tasks: inout ThrowingTaskGroup<Void, any Error>
    ) {
        guard !claimed.isEmpty else { return }
        serial += 1
        let (group, answers, changes) = (serial, answers, changes)
        groups[group] = claimed
        // Each call writes what the store said under its request's id, and the tasks return nothing: a child task's
        // result read back through a task group came out garbled in release builds (Swift 6.3.1), so answers are
        // never matched by what a group hands back, and the groups that ended are found by their number.
        tasks.addTask {
            await withDiscardingTaskGroup { calls in
                for item in claimed {
                    calls.addTask {
                        let result: Result<SendResult, any Error>
                        do {
                            let said = try await SendDeadline.$latest.withValue(item.notAfter) {
                                try await send(item.json, item.open)
                            }
                            // Without an answer past its deadline (a retry refused to leave): as below.
                            if case .unreached = said, ContinuousClock.now > item.notAfter {
                                result = .success(.missed)
                            } else {
                                result = .success(said)
                            }
                        } catch {
                            // Past its deadline the request cannot be answered any more, whatever stopped the call.
                            result = ContinuousClock.now > item.notAfter ? .success(.missed) : .failure(error)
                        }
                        answers.set(result, for: item.open.id)
                    }
                }
            }
            answers.end(group)
            changes.signal()
        }
    }

    /// Takes the groups whose calls all ended since the last call, in the order they were claimed.
    mutating func takeEnded() -> [Ended] {
        answers.takeEnded().sorted().compactMap { group in
            guard let claimed = groups.removeValue(forKey: group) else { return nil }
            return Ended(claimed: claimed, results: answers.take(claimed.map(\.open.id)))
        }
    }
}

/// What the store said to each answer out, by request id, and the groups whose calls all ended, written by the
/// calls' tasks as they end.
private final class StoreAnswers: Sendable {
    private struct State {
        var answers: [Int64: Result<SendResult, any Error>] = [:]
        var ended: [Int] = []
    }

    private let state = Mutex(State())

    func set(_ result: Result<SendResult, any Error>, for id: Int64) {
        state.withLock { $0.answers[id] = result }
    }

    func end(_ group: Int) {
        state.withLock { $0.ended.append(group) }
    }

    func takeEnded() -> [Int] {
        state.withLock { state in
            defer { state.ended = [] }
            return state.ended
        }
    }

    func take(_ ids: [Int64]) -> [Int64: Result<SendResult, any Error>] {
        state.withLock { state in
            var taken: [Int64: Result<SendResult, any Error>] = [:]
            for id in ids { taken[id] = state.answers.removeValue(forKey: id) }
            return taken
        }
    }
}
