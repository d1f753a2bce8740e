/// The outcome of asking a store about one subscription.
public enum StatusReading: Sendable, Equatable {
    /// A usable answer.
    case observed(StatusObservation)
    /// The store sent a state value this code does not know: it is kept raw in `store_state`, reported, and nothing
    /// else changes.
    case unknownState(String)
    /// The store does not know the subscription (Google 404; Apple 4040010 in every environment asked).
    case missing
    /// An answer that cannot be used (missing line items, unparsable times, bad signatures, ...): reported, counted
    /// as a failure, the stored state left as it was.
    case badAnswer(String)
}
