import Foundation
import Postgres
import Synchronization

extension RefundRequestAnswerer {
    /// Sends a group's claimed answers side by side and records, in one transaction, what the store said to each;
    /// a call that never reached the store releases its claim for the next run and, once the others are recorded,
    /// stops the job with its error.
    func deliver(_ claimed: [Claimed], in environment: JobEnvironment) async throws {
        guard !claimed.isEmpty else { return }
        let send = self.send
        // Each call writes what the store said under its request's id, and the group's tasks return nothing: a
        // child task's result read back through the group came out garbled in release builds (Swift 6.3.1), so
        // answers are never matched by what the group hands back.
        let answers = StoreAnswers()
        await withDiscardingTaskGroup { group in
            for item in claimed {
                group.addTask {
                    let result: Result<SendResult, any Error>
                    do {
                        result = .success(try await send(item.json, item.open))
                    } catch {
                        result = .failure(error)
                    }
                    answers.set(result, for: item.open.id)
                }
            }
        }
        let results = answers.all
        var finishes: [RefundRequestStore.Finish] = []
        var released: [Int64] = []
        var stop: (any Error)?
        for item in claimed {
            // A call whose task ended without an answer may still have reached the store: never sent again.
            switch results[item.open.id] ?? .success(.refused(code: "interrupted", message: "no answer recorded")) {
            case .success(.answered):
                finishes.append(.init(id: item.open.id, answer: .answered))
                environment.counters.add("answered")
            case .success(.refused(let code, let message)):
                finishes.append(.init(id: item.open.id, answer: .failed, errorCode: code))
                environment.counters.add("answers_failed")
                environment.logger.error("\(item.label): the store refused the answer (\(code)): \(message)")
            case .failure(let error):
                released.append(item.open.id)
                stop = stop ?? error
            }
        }
        try record(finishes, released: released, of: claimed, on: environment.connection)
        environment.answersSent(finishes.count)
        if let stop { throw stop }
    }

    /// Records the finished answers and releases the rest; a Google answer's usage evidence (IP addresses,
    /// locations) goes in the same transaction.
    private func record(
        _ finishes: [RefundRequestStore.Finish], released: [Int64], of claimed: [Claimed],
        on connection: PostgresConnection
    ) throws {
        let finished = Set(finishes.map(\.id))
        let evidence = claimed.filter { $0.open.request.store == .google && finished.contains($0.open.id) }
        guard !evidence.isEmpty else {
            return try requests.finishAndRelease(finishes, released: released, on: connection)
        }
        try connection.transaction { connection in
            try requests.finishAndRelease(finishes, released: released, on: connection)
            try ConsumptionUsageEventStore.delete(ids: evidence.flatMap { Self.ids($0.open) }, on: connection)
        }
    }
}

/// What the store said to each answer of a group, by request id, written by the calls' tasks as they end.
private final class StoreAnswers: Sendable {
    private let answers = Mutex<[Int64: Result<SendResult, any Error>]>([:])

    func set(_ result: Result<SendResult, any Error>, for id: Int64) {
        answers.withLock { $0[id] = result }
    }

    var all: [Int64: Result<SendResult, any Error>] { answers.withLock { $0 } }
}
