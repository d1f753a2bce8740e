import Foundation

extension RefundReport {
    /// With `--rates`: converted totals across every currency, per amount source: the sums of the printed rows.
    public func convertedTotals() -> [(String, Group)] {
        var totals: [String: Group] = [:]
        var taxUnknown: Set<String> = []
        for group in groups {
            guard let gross = group.convertedGrossNanos else { continue }
            let source = group.keys["source"] ?? ""
            var total =
                totals[source]
                ?? Group(
                    keys: ["source": source], refunds: 0, quantity: 0, grossNanos: nil, taxNanos: nil,
                    unknownAmount: 0, reversed: 0)
            total.convertedGrossNanos = (total.convertedGrossNanos ?? 0) + gross
            if let tax = group.convertedTaxNanos {
                total.convertedTaxNanos = (total.convertedTaxNanos ?? 0) + tax
            } else {
                taxUnknown.insert(source)
            }
            totals[source] = total
        }
        for source in taxUnknown { totals[source]?.convertedTaxNanos = nil }
        return totals.sorted { $0.key < $1.key }
    }

    /// Totals per currency and amount source (never summed across currencies, and estimated amounts never mixed
    /// into store amounts), keyed `"<currency> <source>"`: the sums of the entries as the rows print them.
    ///
    /// Where a currency's tax is stated for one platform and not another (Google states the tax it refunded,
    /// Apple does not), a total over both would have to leave tax and net blank and so drop the tax that is known:
    /// that currency's total is given per platform instead, keyed `"<currency> <source> <platform>"` with the
    /// platform among its keys, each with its own tax and net. The parts add up to the currency's gross.
    public func totalsByCurrency() -> [(String, Group)] {
        let parts = options.by.contains(.platform) || platformParts.isEmpty ? groups : platformParts
        let perPlatform = Self.summed(parts) { group in
            [group.keys["currency"] ?? "", group.keys["source"] ?? "", group.keys["platform"] ?? ""]
        }
        var split: Set<[String]> = []
        var byCurrency: [[String]: [Group]] = [:]
        for (key, total) in perPlatform { byCurrency[Array(key.prefix(2)), default: []].append(total) }
        for (key, totals) in byCurrency {
            let priced = totals.filter { $0.grossNanos != nil }
            if priced.contains(where: { $0.taxNanos != nil }) && priced.contains(where: { $0.taxNanos == nil }) {
                split.insert(key)
            }
        }
        let merged = Self.summed(perPlatform.map(\.1)) { total in
            let key = [total.keys["currency"] ?? "", total.keys["source"] ?? ""]
            return split.contains(key) ? key + [total.keys["platform"] ?? ""] : key
        }
        // Converted amounts are rounded once per printed row: a currency's total is the sum of its rows' (the parts
        // by platform, rounded each, could differ from it by a minor unit). Only a total split by platform, which no
        // printed row matches, keeps its parts' own.
        let rowSums = Dictionary(
            uniqueKeysWithValues: Self.summed(groups) { [$0.keys["currency"] ?? "", $0.keys["source"] ?? ""] })
        return merged.map { key, total in
            var total = total
            total.keys = ["currency": key[0], "source": key[1]]
            if key.count > 2 {
                total.keys["platform"] = key[2]
            } else if let rows = rowSums[key] {
                (total.convertedGrossNanos, total.convertedTaxNanos) = (
                    rows.convertedGrossNanos, rows.convertedTaxNanos
                )
            }
            return (key.filter { !$0.isEmpty }.joined(separator: " "), total)
        }.sorted { $0.0 < $1.0 }
    }

    /// Whether some total is one platform's part of its currency (``totalsByCurrency()``).
    public var totalsSplitByPlatform: Bool {
        totalsByCurrency().contains { $0.1.keys["platform"] != nil }
    }

    /// `groups` summed by `key`: counts and amounts added; tax (and converted tax) unknown for a key when any of
    /// its groups with an amount has none.
    static func summed(_ groups: [Group], by key: (Group) -> [String]) -> [([String], Group)] {
        var totals: [[String]: Group] = [:]
        var order: [[String]] = []
        var taxUnknown: Set<[String]> = []
        for group in groups {
            let name = key(group)
            if totals[name] == nil { order.append(name) }
            var total =
                totals[name]
                ?? Group(
                    keys: group.keys, refunds: 0, quantity: 0, grossNanos: nil, taxNanos: nil, unknownAmount: 0,
                    reversed: 0)
            total.refunds += group.refunds
            total.quantity += group.quantity
            if let gross = group.grossNanos {
                total.grossNanos = (total.grossNanos ?? 0) + gross
                if let tax = group.taxNanos {
                    total.taxNanos = (total.taxNanos ?? 0) + tax
                } else {
                    taxUnknown.insert(name)
                }
            }
            if let converted = group.convertedGrossNanos {
                total.convertedGrossNanos = (total.convertedGrossNanos ?? 0) + converted
                if let tax = group.convertedTaxNanos {
                    total.convertedTaxNanos = (total.convertedTaxNanos ?? 0) + tax
                }
            }
            total.unknownAmount += group.unknownAmount
            total.familyRevokes += group.familyRevokes
            total.notRevoked += group.notRevoked
            total.reversed += group.reversed
            total.restated += group.restated
            totals[name] = total
        }
        for name in taxUnknown {
            totals[name]?.taxNanos = nil
            totals[name]?.convertedTaxNanos = nil
        }
        return order.map { ($0, totals[$0]!) }
    }
}
