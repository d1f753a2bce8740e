/// The open requests a run holds between groups, nearest deadline first, each taken at most once in the run, with
/// their subjects (facts, the ledger's figures) loaded a chunk ahead of the groups.
struct OpenRequestsInHand<Subject> {
    private var pending: [OpenRefundRequest] = []
    private var subjects: [Int64: Subject] = [:]
    /// The requests taken in this run.
    private(set) var taken: Set<Int64> = []

    /// Whether no request is left in hand.
    var isEmpty: Bool { pending.isEmpty }
    /// The requests left in hand.
    var count: Int { pending.count }

    /// Replaces the requests in hand with `open` (read again, nearest deadline first), less those taken already:
    /// a request left `no_facts` earlier in the run is still open, and is decided once per run.
    mutating func replace(with open: [OpenRefundRequest]) {
        pending = open.filter { !taken.contains($0.id) }
        let kept = Set(pending.map(\.id))
        subjects = subjects.filter { kept.contains($0.key) }
    }

    /// Takes the next `size` requests with their subjects; those without one are loaded first with `load`, for
    /// the next `ahead` requests in hand at once.
    mutating func next(
        _ size: Int, ahead: Int, load: ([OpenRefundRequest]) throws -> [Subject]
    ) rethrows -> [(OpenRefundRequest, Subject)] {
        let group = pending.prefix(size)
        if group.contains(where: { subjects[$0.id] == nil }) {
            let missing = pending.prefix(max(size, ahead)).filter { subjects[$0.id] == nil }
            let loaded = try load(missing)
            precondition(loaded.count == missing.count, "one subject per request")
            for (open, subject) in zip(missing, loaded) { subjects[open.id] = subject }
        }
        pending.removeFirst(group.count)
        return group.map { open in
            taken.insert(open.id)
            guard let subject = subjects.removeValue(forKey: open.id) else { preconditionFailure("loaded above") }
            return (open, subject)
        }
    }
}
