import Foundation
import Testing

@testable import Ledger

/// A property of the pricing rule over generated order histories: quantity parts, partial refunds by amount, a full
/// refund of the rest (stated either way), parts inside and outside the voided list's 30 days, events seconds away
/// from their voided rows. Per order, what the ledger's rows give back is exactly what the history refunded, never
/// more than the order charged, and pricing again gives the same rows.
@Suite struct OrderHistoryPropertyTests {
    /// A small deterministic generator (SplitMix64), so a failing seed can be replayed.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
        }
        mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }
    }

    /// One generated history and what it refunded in all (nanos).
    struct History {
        var order: OrderHistoryBuilder
        var voided: [GoogleOrderPricing.VoidedPart]
        var refunded: Int64
        var charged: Int64
    }

    static let now: Int64 = 1_790_000_000_000
    static let day: Int64 = 86_400_000

    /// `minor` minor units of a currency with `digits` decimals, as the decimal text a receipt shows.
    static func text(_ minor: Int64, digits: Int) -> String {
        guard digits > 0 else { return "\(minor)" }
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let fraction = String(minor % scale)
        return "\(minor / scale)." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    static func history(seed: UInt64) -> History {
        var random = Generator(state: seed)
        let (currency, digits) = [("USD", 2), ("JPY", 0), ("KWD", 3), ("KRW", 0), ("EUR", 2)][random.int(0...4)]
        var nano: Int64 = 1_000_000_000
        for _ in 0..<digits { nano /= 10 }
        let bought = random.int(1...8)
        let unit = Int64(random.int(100...5000))  // minor units, tax included
        let total = unit * Int64(bought)
        var order = OrderHistoryBuilder(
            currency: currency, total: text(total, digits: digits), tax: "0", quantity: bought)
        var voided: [GoogleOrderPricing.VoidedPart] = []
        var (left, leftMoney, refunded) = (bought, total, Int64(0))
        var time = now - Int64(random.int(0...60)) * day
        var rowId: Int64 = 0
        while left > 0, random.chance(70) {
            time += Int64(random.int(1...72)) * 3_600_000
            let inWindow = now - time <= 30 * day
            if random.chance(30), leftMoney > unit {
                // A partial refund by amount: less than half a unit, so never taken for units.
                let amount = Int64(random.int(1...Int(unit / 2 - 1)))
                order.partial(text(amount, digits: digits), tax: "0", created: time)
                (leftMoney, refunded) = (leftMoney - amount, refunded + amount)
            } else if left > 1, random.chance(60) {
                let units = random.int(1...(left - 1))
                order.partial(
                    text(unit * Int64(units), digits: digits), tax: "0",
                    created: time + Int64(random.int(1000...30_000)))
                rowId += 1
                if inWindow { voided.append(.init(rowId: rowId, units: units, voidedMillis: time)) }
                (left, leftMoney, refunded) = (
                    left - units, leftMoney - unit * Int64(units), refunded + unit * Int64(units)
                )
            } else {
                let stated = random.chance(50) ? total - (total - leftMoney) : total
                order.fullRefund(text(stated, digits: digits), tax: "0", at: time + Int64(random.int(1000...30_000)))
                rowId += 1
                if inWindow { voided.append(.init(rowId: rowId, units: nil, voidedMillis: time)) }
                (left, refunded) = (0, refunded + leftMoney)
            }
        }
        return History(order: order, voided: voided, refunded: refunded * nano, charged: total * nano)
    }

    @Test(arguments: 0..<300)
    func whatTheLedgerGivesBackIsWhatTheHistoryRefunded(seed: Int) throws {
        let history = Self.history(seed: UInt64(seed) &* 7919 &+ 17)
        let order = try history.order.order()
        let priced = GoogleOrderPricing.price(order, voided: history.voided, payload: Data())
        #expect(priced.overRefund == nil)
        let parts = priced.parts.reduce(Int64(0)) { $0 + ($1.gross ?? 0) }
        let unrevoked = priced.unrevoked.reduce(Int64(0)) { sum, record in
            guard case .stated(let gross, _, _) = record.amount else { return sum }
            return sum + gross
        }
        #expect(parts + unrevoked == history.refunded, "seed \(seed): \(priced)")
        #expect(parts + unrevoked <= history.charged)
        #expect(priced.parts.count == history.voided.count)
        #expect(GoogleOrderPricing.price(order, voided: history.voided, payload: Data()) == priced)
    }
}
