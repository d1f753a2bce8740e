import Foundation

extension StatusReport {
    /// An app's last night: the latest run of each of its nightly jobs (``NightlyPlan``), taken together.
    public struct Night: Codable, Sendable, Equatable {
        /// When the first of them started; while some have not ended, when the first of those started.
        public var startedAt: Date
        /// When the last of them ended; nil while one has not ended (running, or its process died).
        public var finishedAt: Date?
        /// The jobs not ended.
        public var running: [String]
        /// The worst outcome of those ended: `failed`, `config`, `partial` or `ok`.
        public var outcome: String
        /// Jobs of the plan with no run at all yet.
        public var neverRun: [String]
    }

    /// The night of an app from its last runs, or nil when none of its nightly jobs ever ran.
    public static func night(of runs: [LastRun], jobs: [String]) -> Night? {
        let mine = runs.filter { jobs.contains($0.job) }
        let unfinished = mine.filter { $0.outcome == nil }
        guard let started = (unfinished.isEmpty ? mine : unfinished).map(\.startedAt).min() else { return nil }
        let running = unfinished.map(\.job)
        let outcomes = mine.compactMap(\.outcome)
        let outcome = ["failed", "config", "partial"].first { outcomes.contains($0) } ?? "ok"
        return Night(
            startedAt: started, finishedAt: running.isEmpty ? mine.compactMap(\.finishedAt).max() : nil,
            running: running, outcome: outcome, neverRun: jobs.filter { job in !mine.contains { $0.job == job } })
    }

    /// The attention line for a night whose job has run longer than `nightly.appTimeout` (its process hangs or
    /// died), or nil.
    static func lateNight(_ night: Night?, app: String, timeout: ConfigDuration, now: Date) -> String? {
        guard let night, !night.running.isEmpty,
            now.timeIntervalSince(night.startedAt) > TimeInterval(timeout.seconds)
        else { return nil }
        let hours = Int(now.timeIntervalSince(night.startedAt)) / 3600
        return "\(app): \(night.running.joined(separator: ", ")) started \(hours) h ago and has not ended "
            + "(longer than nightly.appTimeout \(timeout)): its process hangs or died; see the Runbook, \"One app is late\""
    }
}
