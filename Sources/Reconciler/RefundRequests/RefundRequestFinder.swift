/// What a ``RefundRequestFinder`` did between two answer groups.
struct FoundRequests: Sendable, Equatable {
    /// New requests were stored: the open requests are read again.
    var stored: Bool
    /// More may still be found.
    var more: Bool
}

/// Requests still being found while the answers go out (Apple's Notification History, read ahead): asked by
/// ``RefundRequestAnswerer`` before each group, on the job's connection.
protocol RefundRequestFinder {
    /// Stores the requests found since the last call, first waiting for one find when `waiting` (the answerer has
    /// nothing else to do); `short`: the answerer has fewer requests in hand than a group (look for more).
    mutating func storeFound(waiting: Bool, short: Bool, in environment: JobEnvironment) async throws -> FoundRequests

    /// Has `wake` called whenever something new is there to store (so that an answerer waiting for its calls'
    /// answers stores and claims it at once).
    func whenFound(_ wake: @escaping @Sendable () -> Void)
}

/// Nothing left to find: the requests were all stored before the answers (Google's pulls).
struct NoMoreRequests: RefundRequestFinder {
    func storeFound(waiting: Bool, short: Bool, in environment: JobEnvironment) async throws -> FoundRequests {
        FoundRequests(stored: false, more: false)
    }

    func whenFound(_ wake: @escaping @Sendable () -> Void) {}
}
