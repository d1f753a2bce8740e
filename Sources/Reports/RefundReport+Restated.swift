extension RefundReport {
    /// The amount columns of an entry, as SQL over the refund `r` (and a `refund_amount_change` row).
    struct EntryAmounts {
        var currency: String
        var source: String
        var note: String
        /// Exact nanos (`numeric`), `NULL` when unknown.
        var gross: String
        var tax: String

        /// The ledger's amounts now.
        static let current = EntryAmounts(
            currency: "r.currency", source: "r.amount_source", note: "r.amount_note",
            gross: nanosSQL("r.gross_amount"), tax: nanosSQL("r.tax_amount"))

        /// The amounts before the change `alias` when there is one (its `old_` columns), else the ledger's now.
        static func before(_ alias: String) -> EntryAmounts {
            func pick(_ old: String, _ now: String) -> String {
                "CASE WHEN \(alias).id IS NULL THEN \(now) ELSE \(old) END"
            }
            let old = side(alias, "old")
            return EntryAmounts(
                currency: pick(old.currency, current.currency), source: pick(old.source, current.source),
                note: pick(old.note, current.note), gross: pick(old.gross, current.gross),
                tax: pick(old.tax, current.tax))
        }

        /// One side (`old` or `new`) of the change `alias`.
        static func side(_ alias: String, _ side: String) -> EntryAmounts {
            let precision = "\(alias).\(side)_precision"
            return EntryAmounts(
                currency: "\(alias).\(side)_currency", source: "\(alias).\(side)_source",
                note: "\(alias).\(side)_note", gross: nanosSQL("\(alias).\(side)_gross", precision: precision),
                tax: nanosSQL("\(alias).\(side)_tax", precision: precision))
        }

        /// The side of the change `c` that the row `s` of ``restatedSides`` names.
        static let restatedSide: EntryAmounts = {
            let (old, new) = (side("c", "old"), side("c", "new"))
            func pick(_ old: String, _ new: String) -> String { "CASE WHEN s.old THEN \(old) ELSE \(new) END" }
            return EntryAmounts(
                currency: pick(old.currency, new.currency), source: pick(old.source, new.source),
                note: pick(old.note, new.note), gross: pick(old.gross, new.gross), tax: pick(old.tax, new.tax))
        }()
    }

    /// With `--basis recorded` and store periods: every change of a refund's amount made after the period its
    /// entry is booked in closed (kept by the ledger in `refund_amount_change`), as two entries booked when it was
    /// made: `restated`, the old amount out (`sign` -1) and the new one in; and, when the refund's reversal was
    /// booked before the change and its period closed too, `restated_reversal`, the same with the signs turned. A
    /// change made while the period was open is in no entry: the period's entries carry the amounts of its close (a
    /// late refund, booked when recorded, takes the amount the store states moments later). The entries of a refund
    /// over all periods add up to its amount now, as `--basis event` books it.
    static func restatedEntries(refundAt: String, reversalAt: String, reversalRecorded: String) -> String {
        func select(_ entry: RefundReport.Entry, sign: String) -> String {
            entrySelect(
                entry, at: "c.changed_at", recorded: "c.changed_at", sign: sign, quantity: "0",
                amounts: .restatedSide, replaced: "s.old", change: "c.id")
        }
        return """
            \(select(.restated, sign: "CASE WHEN s.old THEN -1 ELSE 1 END"))
            FROM refund_amount_change c
            JOIN refund r ON r.id = c.refund_id
            CROSS JOIN (VALUES (true), (false)) AS s(old)
            WHERE \(inRange("c.changed_at"))
              AND \(restates(booked: refundAt, changed: "c.changed_at"))
              \(entryFilter)
            UNION ALL
            \(select(.restatedReversal, sign: "CASE WHEN s.old THEN 1 ELSE -1 END"))
            FROM refund_amount_change c
            JOIN refund r ON r.id = c.refund_id
            \(reversalJoin)
            CROSS JOIN (VALUES (true), (false)) AS s(old)
            WHERE r.reversed_at IS NOT NULL AND c.changed_at >= \(reversalRecorded)
              AND \(inRange("c.changed_at"))
              AND \(restates(booked: reversalAt, changed: "c.changed_at"))
              \(entryFilter)
            """
    }
}
