/// Store identifiers derived from a plan's index, so that none has to be stored: Apple transaction ids, Google
/// purchase tokens and order ids. Each can be parsed back to its plan.
extension Scenario {
    /// The first Apple transaction id; transaction `k` of plan `i` is `base + 1000 i + k`.
    static let appleIdBase: Int64 = 2_000_000_000_000_000

    /// Apple `originalTransactionId` of a plan (the first transaction's id).
    func originalTransactionId(plan index: Int) -> Int64 {
        Self.appleIdBase + Int64(index) * 1000
    }

    /// The purchases of the Apple customer who made plan `index` (`ScenarioSpec.appleCustomerPlans` consecutive
    /// purchases of its app, in its environment), in plan order; the first stands for the customer.
    func customerPlans(of index: Int) -> [Int] {
        let size = max(1, spec.appleCustomerPlans)
        guard size > 1 else { return [index] }
        let apps = max(1, spec.apps.count)
        let first = (index / apps) / size * size * apps + index % apps
        let sandbox = plans[index].flags.contains(.sandbox)
        return (0..<size).map { first + $0 * apps }.filter {
            $0 < plans.count && plans[$0].flags.contains(.sandbox) == sandbox
        }
    }

    /// Apple `appTransactionId` of the customer who made plan `index` (one per customer and app).
    func appTransactionId(plan index: Int) -> String {
        String(704_000_000_000_000 + Int64(customerPlans(of: index).first ?? index))
    }

    /// Apple `transactionId` of charge `k` of a plan.
    func transactionId(plan index: Int, charge: Int) -> Int64 {
        originalTransactionId(plan: index) + Int64(charge)
    }

    /// Apple `webOrderLineItemId` of charge `k`.
    func webOrderLineItemId(plan index: Int, charge: Int) -> Int64 {
        1_000_000_000_000_000 + Int64(index) * 1000 + Int64(charge)
    }

    /// Finds the plan and charge of an Apple transaction id (any environment), if it names one.
    func appleTransaction(_ text: String) -> (plan: Int, charge: Int)? {
        guard let id = Int64(text), id >= Self.appleIdBase else { return nil }
        let offset = id - Self.appleIdBase
        let plan = Int(offset / 1000)
        let charge = Int(offset % 1000)
        guard plan < plans.count, spec.apps[Int(plans[plan].app)].platform == .apple,
            charge < plans[plan].chargeCount
        else { return nil }
        return (plan, charge)
    }

    /// Google `purchaseToken` of a plan: opaque letters, then a marker and the index in base 36.
    func purchaseToken(plan index: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(40)
        for part in 0..<4 {
            var bits = SplitMix64.mix(idSalt, UInt64(index), UInt64(part))
            for _ in 0..<10 {
                bytes.append(alphabet[Int(bits % 62)])
                bits /= 62
            }
        }
        return String(decoding: bytes, as: UTF8.self) + ".AO-J1O" + String(index, radix: 36)
    }

    /// The plan a Google purchase token names, if any.
    func googlePlan(token: String) -> Int? {
        guard let marker = token.range(of: ".AO-J1O", options: .backwards),
            let index = Int(token[marker.upperBound...], radix: 36), index >= 0, index < plans.count,
            spec.apps[Int(plans[index].app)].platform == .google, purchaseToken(plan: index) == token
        else { return nil }
        return index
    }

    /// Google `orderId` of charge `k`: `GPA.dddd-dddd-dddd-ddddd` for the first, then `..0`, `..1`, ... for renewals.
    func orderId(plan index: Int, charge: Int) -> String {
        let prefix = 3000 + Int(idSalt % 1000)
        let digits = String(index)
        let padded = String(repeating: "0", count: max(0, 13 - digits.count)) + digits
        let digitBytes = Array((String(prefix) + padded).utf8)
        var bytes = Array("GPA.".utf8)
        bytes.reserveCapacity(28)
        bytes += digitBytes[0..<4]
        bytes.append(UInt8(ascii: "-"))
        bytes += digitBytes[4..<8]
        bytes.append(UInt8(ascii: "-"))
        bytes += digitBytes[8..<12]
        bytes.append(UInt8(ascii: "-"))
        bytes += digitBytes[12...]
        let base = String(decoding: bytes, as: UTF8.self)
        return charge == 0 ? base : base + ".." + String(charge - 1)
    }

    /// Apple `appAccountToken` (a UUID) of a plan that has one.
    func appAccountToken(plan index: Int) -> String? {
        guard plans[index].flags.contains(.appAccountToken) else { return nil }
        return Self.uuid(SplitMix64.mix(idSalt, UInt64(index), 7), SplitMix64.mix(idSalt, UInt64(index), 8))
    }

    /// A version-4-shaped UUID from 128 bits.
    static func uuid(_ high: UInt64, _ low: UInt64) -> String {
        let high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000
        let low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        func hex(_ value: UInt64, _ width: Int) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return hex(high >> 32, 8) + "-" + hex((high >> 16) & 0xFFFF, 4) + "-" + hex(high & 0xFFFF, 4) + "-"
            + hex(low >> 48, 4) + "-" + hex(low & 0xFFFF_FFFF_FFFF, 12)
    }

    /// Google `regionCode` of a plan.
    func regionCode(plan index: Int) -> String {
        ["US", "DE", "GB", "JP", "FR", "BR", "IN", "CA"][Int(SplitMix64.mix(idSalt, UInt64(index), 9) % 8)]
    }
}
