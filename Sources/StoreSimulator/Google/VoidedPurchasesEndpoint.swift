/// `GET /androidpublisher/v3/applications/{packageName}/purchases/voidedpurchases`, as the discovery document
/// describes `purchases.voidedpurchases.list`: a window on the time each void was *recorded* (inclusive at both
/// ends), oldest first, token paging that ignores the times, `type` 0/1, `includeQuantityBasedPartialRefund`.
/// https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list
///
/// Choices where Google's documentation is silent: a `startTime` older than 30 days is refused with 400; an
/// `endTime` after now is refused with 400 (or clamped, by option); the page token carries the position of the
/// next row, the window's end, the first request's `type` and `includeQuantityBasedPartialRefund`, and when it was
/// issued (for ``SimulatorOptions/voidedPageTokenLifetimeSeconds``).
struct VoidedPurchasesEndpoint {
    static let thirtyDays: Int64 = 30 * 86_400_000

    let state: SimulatorState

    private struct Query {
        var position: Int
        /// The position in the app's voids made by refund reviews (``RefundReviewOutcomes``).
        var reviewPosition: Int
        var end: Int64
        var type: Int
        var includePartial: Bool
    }

    func handle(_ request: StoreRequest, app: Int, faults: Set<FaultKind>) -> StoreReply {
        let now = state.now
        var maxResults = 1000
        if let text = request.parameter("maxResults") {
            guard let value = Int(text), value >= 0 else {
                return GoogleError.invalidArgument("Invalid value at 'max_results' (TYPE_UINT32), \"\(text)\"")
            }
            maxResults = value == 0 ? 1000 : min(value, 1000)
        }
        let order = state.scenario.voidedOrder[app]
        let reviews = RefundReviewOutcomes(state: state).refunded(app: state.scenario.spec.apps[app].id, now: now)
            .map(RefundReviewOutcomes.void)
        let query: Query
        let token = request.parameter("token").flatMap { $0.isEmpty ? nil : $0 }
        switch token.map({ parseToken($0, app: app, now: now, order: order, faults: faults) })
            ?? parseWindow(request, now: now, order: order, reviews: reviews)
        {
        case .failure(let reply): return reply
        case .success(let parsed): query = parsed
        }
        let (rows, next) = page(of: order, reviews: reviews, query, maxResults: maxResults)
        let encoding = state.options.voidedEnumEncoding
        return .json { json in
            json.object { object in
                if let next {
                    object.object("tokenPagination") { pagination in
                        let fields: [Int64] = [
                            Int64(app), Int64(next.0), query.end, Int64(query.type), query.includePartial ? 1 : 0, now,
                            Int64(next.1),
                        ]
                        let asked = request.parameter("token").flatMap { $0.isEmpty ? nil : $0 }
                        let repeated = faults.contains(.repeatedPageToken) ? asked : nil
                        pagination.field("nextPageToken", repeated ?? state.pageTokens.encode("voided", fields))
                    }
                }
                guard !rows.isEmpty else { return }
                object.array("voidedPurchases") { list in
                    for row in rows {
                        let odd = row.index.flatMap { OddRow.kind(ofRefund: $0, rate: state.options.oddRows) }
                        for _ in 0..<(odd == .repeated ? 2 : 1) {
                            writeRow(
                                row, encoding: encoding, wrongTypes: faults.contains(.wrongFieldTypes), odd: odd, &list)
                        }
                    }
                }
            }
        }
    }

    /// The query a page token carries, or the error for a token that is not one of this app's, or expired.
    private func parseToken(_ token: String, app: Int, now: Int64, order: [Int32], faults: Set<FaultKind>) -> Parsed {
        let lifetime = state.options.voidedPageTokenLifetimeSeconds.map { $0 * 1000 } ?? .max
        guard !faults.contains(.expiredPageToken),
            let fields = state.pageTokens.decode("voided", token, count: 7), fields[0] == Int64(app),
            fields[1] >= 0, fields[1] <= Int64(order.count), now - fields[5] <= lifetime, fields[6] >= 0
        else {
            return .failure(GoogleError.invalidArgument("Invalid pagination token."))
        }
        return .success(
            Query(
                position: Int(fields[1]), reviewPosition: Int(fields[6]), end: fields[2], type: Int(fields[3]),
                includePartial: fields[4] == 1))
    }

    /// One row of the list: a scenario refund (its index) or a refund review's void.
    struct Row {
        var refund: RefundRecord
        /// The index into the scenario's refunds; nil for a review's void.
        var index: Int32?
    }

    /// The rows of one page and where the next page starts (in the scenario's list and in the reviews' voids), if
    /// any: the two lists merged by the time each void was recorded, the scenario's first on a tie.
    private func page(of order: [Int32], reviews: [RefundRecord], _ query: Query, maxResults: Int)
        -> (rows: [Row], next: (Int, Int)?)
    {
        var rows: [Row] = []
        var (index, review) = (query.position, min(query.reviewPosition, reviews.count))
        while index < order.count || review < reviews.count {
            let scenarioRefund = index < order.count ? state.scenario.refunds[Int(order[index])] : nil
            let row =
                if let scenarioRefund,
                    review == reviews.count || scenarioRefund.recordedMillis <= reviews[review].recordedMillis
                {
                    Row(refund: scenarioRefund, index: order[index])
                } else {
                    Row(refund: reviews[review], index: nil)
                }
            if row.refund.recordedMillis > query.end { break }
            if matches(row.refund, query) {
                if rows.count == maxResults { return (rows, (index, review)) }
                rows.append(row)
            }
            if row.index == nil { review += 1 } else { index += 1 }
        }
        return (rows, nil)
    }

    private enum Parsed {
        case success(Query)
        case failure(StoreReply)
    }

    private func parseWindow(_ request: StoreRequest, now: Int64, order: [Int32], reviews: [RefundRecord]) -> Parsed {
        var start = now - Self.thirtyDays
        var end = now
        if let text = request.parameter("startTime") {
            guard let value = Int64(text) else {
                return .failure(GoogleError.invalidArgument("Invalid value at 'start_time' (TYPE_INT64), \"\(text)\""))
            }
            start = value
        }
        if let text = request.parameter("endTime") {
            guard let value = Int64(text) else {
                return .failure(GoogleError.invalidArgument("Invalid value at 'end_time' (TYPE_INT64), \"\(text)\""))
            }
            end = value
        }
        var type = 0
        if let text = request.parameter("type") {
            guard let value = Int(text), value == 0 || value == 1 else {
                return .failure(GoogleError.invalidArgument("Invalid type: \(text). Valid values are 0 and 1."))
            }
            type = value
        }
        let partialText = request.parameter("includeQuantityBasedPartialRefund")?.lowercased()
        guard partialText == nil || partialText == "true" || partialText == "false" else {
            return .failure(
                GoogleError.invalidArgument("Invalid value at 'include_quantity_based_partial_refund' (TYPE_BOOL)"))
        }
        if start < now - Self.thirtyDays {
            return .failure(GoogleError.invalidArgument("Start time cannot be older than 30 days."))
        }
        if start > end {
            return .failure(GoogleError.invalidArgument("Start time must be before end time."))
        }
        if end > now {
            if state.options.futureEndTime == .reject {
                return .failure(GoogleError.invalidArgument("End time cannot be greater than the current time."))
            }
            // Clamped to now; a window that starts after now (a client clock ahead of the store's) holds nothing
            // recorded yet: an empty answer, not an error, since the times as sent were in order.
            end = max(now, start - 1)
        }
        // The first row recorded at or after the start.
        var low = 0
        var high = order.count
        while low < high {
            let mid = (low + high) / 2
            if state.scenario.refunds[Int(order[mid])].recordedMillis < start { low = mid + 1 } else { high = mid }
        }
        let review = reviews.firstIndex { $0.recordedMillis >= start } ?? reviews.count
        return .success(
            Query(position: low, reviewPosition: review, end: end, type: type, includePartial: partialText == "true"))
    }

    private func matches(_ refund: RefundRecord, _ query: Query) -> Bool {
        if refund.kind == .partialQuantity, !query.includePartial { return false }
        if query.type == 0, !state.scenario.plans[Int(refund.plan)].isOneTime { return false }
        return true
    }

    private func writeRow(
        _ given: Row, encoding: SimulatorOptions.EnumEncoding, wrongTypes: Bool, odd: OddRow?, _ list: inout JSONWriter
    ) {
        let scenario = state.scenario
        let refund = given.refund
        // A review's void: numbers in a mixed encoding, never odd.
        let refundIndex = given.index ?? 1
        let plan = scenario.plans[Int(refund.plan)]
        let charge = Int(refund.charge)
        let purchased = plan.chargeMillis(charge, periods: scenario.periods(plan))
        let asString: Bool
        switch encoding {
        case .numbers: asString = false
        case .strings: asString = true
        case .mixed: asString = refundIndex % 2 == 0
        }
        list.object { row in
            if odd != .missingOptional { row.field("kind", "androidpublisher#voidedPurchase") }
            if odd == .wrongType {
                row.field("purchaseToken", Int(refundIndex))
            } else {
                row.field("purchaseToken", scenario.purchaseToken(plan: Int(refund.plan)))
            }
            if odd != .missingOptional { row.field("purchaseTimeMillis", String(purchased)) }
            if wrongTypes {
                row.key("voidedTimeMillis")
                row.array { $0.string(String(refund.eventMillis)) }
            } else {
                row.field("voidedTimeMillis", String(refund.eventMillis))
            }
            let orderId = scenario.orderId(plan: Int(refund.plan), charge: charge)
            switch odd {
            case .noOrderId: break
            case .oversizedId: row.field("orderId", OddRow.oversizedOrderId(orderId))
            default: row.field("orderId", orderId)
            }
            let (source, reason) = odd == .unknownCodes ? (9, 97) : (Int(refund.source), Int(refund.reason))
            for (name, value) in [("voidedSource", source), ("voidedReason", reason)] {
                if asString { row.field(name, String(value)) } else { row.field(name, value) }
            }
            if refund.kind == .partialQuantity { row.field("voidedQuantity", Int(refund.quantity)) }
        }
    }
}
