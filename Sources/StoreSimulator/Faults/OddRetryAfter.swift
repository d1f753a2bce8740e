/// The `Retry-After` values of the ``FaultKind/oddRetryAfter`` fault, taken in turn: what a misbehaving proxy or
/// store could send. None is a valid wait; a client must read each as "no hint" (or a bounded wait) and never crash.
enum OddRetryAfter {
    static let values: [String] = [
        "Sun, 06 Nov 1994 08:49:37 GMT\u{200D}",  // a zero-width joiner: Foundation's DateFormatter trapped on it
        "\u{200D}",
        "\u{FF11}\u{FF12}\u{FF10}",  // full-width 120
        "Wed, \u{0662}\u{0661} Oct 2026 07:28:00 GMT",  // Arabic-Indic digits in a date
        String(repeating: "9", count: 8000),
        "Wed, 21 Oct 2026 07:28:00 GMT" + String(repeating: " GMT", count: 1000),
        "NaN", "-1", "1e400", "\u{1F552} soon",
    ]

    /// The value for the `turn`-th faulty call.
    static func value(_ turn: UInt64) -> String {
        values[Int(turn % UInt64(values.count))]
    }
}
