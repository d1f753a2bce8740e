/// Exact money formatting: amounts are integer milliunits (10990 = 10.99), converted to currency units as decimal
/// text with no floating point anywhere.
public enum Money {
    /// Formats milliunits as units with at least two decimals: 10990 → "10.99", 5495 → "5.495", -1000 → "-1.00".
    public static func units(_ milli: Int64) -> String {
        let negative = milli < 0
        let magnitude = milli.magnitude
        let whole = magnitude / 1000
        let fraction = magnitude % 1000
        var decimals = String(fraction)
        decimals = String(repeating: "0", count: 3 - decimals.count) + decimals
        if decimals.hasSuffix("0") { decimals.removeLast() }
        return (negative ? "-" : "") + "\(whole).\(decimals)"
    }
}
