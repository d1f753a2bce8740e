import Foundation

extension RefundReport {
    /// With `--rates`: converted totals across every currency, per amount source (and environment when grouped by
    /// it), keyed `"<source>[ <environment>]"`: the sums of the printed rows.
    public func convertedTotals() -> [(String, Group)] {
        var totals: [String: Group] = [:]
        var taxUnknown: Set<String> = []
        for group in groups {
            guard let gross = group.convertedGrossNanos else { continue }
            var keys = ["source": group.keys["source"] ?? ""]
            keys["environment"] = group.keys["environment"]
            let name = [keys["source"], keys["environment"]].compactMap { $0 }.joined(separator: " ")
            var total =
                totals[name]
                ?? Group(
                    keys: keys, refunds: 0, quantity: 0, grossNanos: nil, taxNanos: nil, unknownAmount: 0,
                    reversed: 0)
            total.convertedGrossNanos = (total.convertedGrossNanos ?? 0) + gross
            if let tax = group.convertedTaxNanos {
                total.convertedTaxNanos = (total.convertedTaxNanos ?? 0) + tax
            } else {
                taxUnknown.insert(name)
            }
            totals[name] = total
        }
        for name in taxUnknown { totals[name]?.convertedTaxNanos = nil }
        return totals.sorted { $0.key < $1.key }
    }

    /// Totals per currency and amount source (never summed across currencies, and estimated amounts never mixed
    /// into store amounts), and per environment when the report is grouped by it (test money never added to real
    /// money), keyed `"<currency> <source>[ <environment>]"`: the sums of the entries as the rows print them.
    ///
    /// Where a currency's tax is stated for one platform and not another (Google states the tax it refunded,
    /// Apple does not), a total over both would have to leave tax and net blank and so drop the tax that is known:
    /// that currency's total is given per platform instead, keyed `"<currency> <source> <platform>"` with the
    /// platform among its keys, each with its own tax and net. The parts add up to the currency's gross.
    public func totalsByCurrency() -> [(String, Group)] {
        let parts = options.by.contains(.platform) || platformParts.isEmpty ? groups : platformParts
        let perPlatform = Self.summed(parts) { group in Self.totalKey(group) + [group.keys["platform"] ?? ""] }
        var split: Set<[String]> = []
        var byCurrency: [[String]: [Group]] = [:]
        for (key, total) in perPlatform { byCurrency[Array(key.prefix(3)), default: []].append(total) }
        for (key, totals) in byCurrency {
            let priced = totals.filter { $0.grossNanos != nil }
            if priced.contains(where: { $0.taxNanos != nil }) && priced.contains(where: { $0.taxNanos == nil }) {
                split.insert(key)
            }
        }
        let merged = Self.summed(perPlatform.map(\.1)) { total in
            let key = Self.totalKey(total)
            return split.contains(key) ? key + [total.keys["platform"] ?? ""] : key
        }
        // Converted amounts are rounded once per printed row: a currency's total is the sum of its rows' (the parts
        // by platform, rounded each, could differ from it by a minor unit). Only a total split by platform, which no
        // printed row matches, keeps its parts' own.
        let rowSums = Dictionary(uniqueKeysWithValues: Self.summed(groups, by: Self.totalKey))
        return merged.map { key, total in
            var total = total
            total.keys = ["currency": key[0], "source": key[1]]
            if !key[2].isEmpty { total.keys["environment"] = key[2] }
            if key.count > 3 {
                total.keys["platform"] = key[3]
            } else if let rows = rowSums[key] {
                (total.convertedGrossNanos, total.convertedTaxNanos) = (
                    rows.convertedGrossNanos, rows.convertedTaxNanos
                )
            }
            return (key.filter { !$0.isEmpty }.joined(separator: " "), total)
        }.sorted { $0.0 < $1.0 }
    }

    /// What a total adds over: currency, amount source and environment (empty unless grouped by it).
    static func totalKey(_ group: Group) -> [String] {
        [group.keys["currency"] ?? "", group.keys["source"] ?? "", group.keys["environment"] ?? ""]
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
