import Logging

/// Items of an Apple page that could not be read (a null, a number where a JWS belongs, an item without its payload):
/// the page's other items are kept and the cursor moves on, so each is counted (`unreadable_items`) and logged as a
/// warning, naming the page, for an operator to raise with Apple. Nothing of them can be stored: there is no payload.
enum UnreadableItems {
    static func report(_ count: Int, page: String, counters: JobCounters, logger: Logger) {
        guard count > 0 else { return }
        counters.add("unreadable_items", count)
        logger.warning("\(page): \(count) items of the page could not be read and were left out")
    }
}
