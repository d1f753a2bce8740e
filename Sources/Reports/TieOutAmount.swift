import Foundation
import Postgres

/// Integer nanos for the tie-out's lines: one order's or one product's refunds fit an `Int64` many times over, and
/// a month of a million orders is rounded and printed without a `Decimal` per cell. Totals stay `Decimal`.
enum TieOutAmount {
    /// Integer nanos as PostgreSQL prints a whole `numeric` (`4990000000`, `-500000000000`, `12.000`).
    static func parse(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        guard let dot = text.firstIndex(of: "."), text[text.index(after: dot)...].allSatisfy({ $0 == "0" }) else {
            return nil
        }
        return Int64(text[..<dot])
    }

    /// A sum's nanos from `row`'s `column`, which the tie-out adds exactly or not at all: beyond `Int64` (9.2 billion
    /// units of a currency in one line, reachable in IDR or VND) the report stops with the column named rather than
    /// printing a zero. `nil` for SQL NULL.
    static func column(_ row: PostgresRow, _ column: String) throws -> Int64? {
        guard let text = try row.decodeIfPresent(column, as: String.self) else { return nil }
        guard let value = parse(text) else {
            throw ReportError(
                "the amount \(text.prefix(40)) in \(column) is beyond what the tie-out adds exactly", code: .failed)
        }
        return value
    }

    /// `nanos` rounded half to even to `currency`'s minor unit (exact when the currency is not known).
    static func rounded(_ nanos: Int64, _ currency: String) -> Int64 {
        guard let exponent = Money.exponent(of: currency) else { return nanos }
        var step: Int64 = 1
        for _ in 0..<(9 - exponent) { step *= 10 }
        let (quotient, remainder) = nanos.quotientAndRemainder(dividingBy: step)
        var whole = quotient
        let twice = remainder.magnitude * 2
        if twice > step.magnitude || (twice == step.magnitude && whole % 2 != 0) {
            whole += remainder < 0 ? -1 : 1
        }
        return whole * step
    }

    /// `nanos` in `currency`'s minor unit, half to even: 4990000000 USD is "4.99", -500000000000 JPY "-500".
    static func text(_ nanos: Int64, _ currency: String) -> String {
        guard let exponent = Money.exponent(of: currency) else {
            return Money.format(nanos: Decimal(nanos), currency: currency)
        }
        let value = rounded(nanos, currency)
        let magnitude = value.magnitude
        let whole = magnitude / 1_000_000_000
        var text = (value < 0 ? "-" : "") + String(whole)
        if exponent > 0 {
            let fraction = String(magnitude % 1_000_000_000)
            text += "." + (String(repeating: "0", count: 9 - fraction.count) + fraction).prefix(exponent)
        }
        return text
    }
}
