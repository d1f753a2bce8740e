import Foundation
import Postgres

extension RefundRequestAnswerer {
    /// Sends a group's claimed answers side by side and records, in one transaction, what the store said to each;
    /// a call that never reached the store releases its claim for the next run and, once the others are recorded,
    /// stops the job with its error.
    func deliver(_ claimed: [Claimed], in environment: JobEnvironment) async throws {
        guard !claimed.isEmpty else { return }
        let send = self.send
        let results = await withTaskGroup(of: (Int, Result<SendResult, any Error>).self) { group in
            for (index, item) in claimed.enumerated() {
                group.addTask {
                    do {
                        return (index, .success(try await send(item.json, item.open)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results: [(Int, Result<SendResult, any Error>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var finishes: [RefundRequestStore.Finish] = []
        var released: [Int64] = []
        var stop: (any Error)?
        for (item, result) in zip(claimed, results) {
            switch result {
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
        try connection.transaction { connection in
            try requests.finish(finishes, on: connection)
            try requests.release(ids: released, on: connection)
            if !evidence.isEmpty {
                try ConsumptionUsageEventStore.delete(ids: evidence.flatMap { Self.ids($0.open) }, on: connection)
            }
        }
    }
}
