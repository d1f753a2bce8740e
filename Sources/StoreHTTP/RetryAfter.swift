import Foundation

/// Parses a `Retry-After` header in any of the forms stores send.
///
/// - A UNIX time in **milliseconds** (Apple's App Store Server API documents this form), recognised as an integer of
///   at least 10¹¹ (March 1973 in milliseconds; no store asks for a wait of 3,000 years).
/// - A UNIX time in seconds, recognised as an integer of at least 10⁹ (no store asks for a wait of 31 years).
/// - Delay seconds, the HTTP standard form (RFC 9110), integer or decimal.
/// - An HTTP-date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the obsolete RFC 850 and asctime forms.
public enum RetryAfter {
    /// The wait a `Retry-After` value asks for, in seconds from `now`.
    /// - Parameters:
    ///   - value: the header's value.
    ///   - now: the current time (injected so tests are deterministic).
    /// - Returns: seconds to wait (0 when the time has already passed), or `nil` when the value is not understood.
    public static func seconds(from value: String, now: Date) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) {
            guard let number = Double(text), number.isFinite else { return nil }
            let nowSeconds = now.timeIntervalSince1970
            if number >= 1e11 { return max(0, number / 1000 - nowSeconds) }
            if number >= 1e9 { return max(0, number - nowSeconds) }
            return number
        }
        // An HTTP-date is ASCII; Foundation's DateFormatter traps on some non-ASCII text (a zero-width joiner).
        guard text.utf8.count <= 64, text.allSatisfy(\.isASCII), let date = httpDate(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// Parses an HTTP-date (RFC 9110 section 5.6.7).
    static func httpDate(_ text: String) -> Date? {
        // asctime pads single-digit days with a second space.
        let text = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
