import Foundation

/// `POST /inApps/v1/notifications/history?paginationToken=`: Get Notification History. The body holds
/// `startDate` and `endDate` (ms; the window is [startDate, endDate)) and optional `notificationType`,
/// `notificationSubtype`, `transactionId` (not with `notificationType`) and `onlyFailures`. At most 20 a page,
/// oldest first; history reaches back 180 days (30 in the sandbox). The pagination token encodes the position of
/// the next notification and a hash of the request body, and expires.
/// https://developer.apple.com/documentation/appstoreserverapi/get-notification-history
struct NotificationHistoryEndpoint {
    static let pageSize = 20
    static let day: Int64 = 86_400_000

    let state: SimulatorState

    private struct Filter {
        var start: Int64
        var end: Int64
        var type: NotificationEvent.Kind?
        var subtype: NotificationEvent.Subtype?
        var plan: Int?
        var onlyFailures: Bool
        var hash: Int64
    }

    func handle(_ request: StoreRequest, app: Int, sandbox: Bool, faults: Set<FaultKind>) -> StoreReply {
        let filter: Filter
        switch parse(request.body, app: app, sandbox: sandbox) {
        case .failure(let reply): return reply
        case .success(let parsed): filter = parsed
        }
        let now = state.now
        let slot = Scenario.notificationSlot(app: app, sandbox: sandbox)
        let events = state.scenario.notifications[slot]
        var position: Int
        if let token = request.parameter("paginationToken"), !token.isEmpty {
            guard let fields = state.pageTokens.decode("history", token, count: 4), fields[0] == Int64(slot),
                fields[2] == filter.hash, fields[1] >= 0, fields[1] <= Int64(events.count)
            else { return AppleError.invalidPaginationToken() }
            if faults.contains(.expiredPageToken) || now - fields[3] > state.options.pageTokenLifetimeSeconds * 1000 {
                return AppleError.paginationTokenExpired()
            }
            position = Int(fields[1])
        } else {
            var low = 0
            var high = events.count
            while low < high {
                let mid = (low + high) / 2
                if events[mid].millis < filter.start { low = mid + 1 } else { high = mid }
            }
            position = low
        }
        let limit = min(filter.end, now + 1)
        var page: [NotificationEvent] = []
        var hasMore = false
        while position < events.count, events[position].millis < limit {
            let event = events[position]
            if matches(event, filter) {
                if page.count == Self.pageSize {
                    hasMore = true
                    break
                }
                page.append(event)
            }
            position += 1
        }
        if !hasMore, !sandbox, filter.type == .refund || filter.type == .refundDeclined {
            // Outcomes of refund requests, after the scenario's own events.
            let appId = state.scenario.spec.apps[app].id
            let requests = events.filter { $0.kind == .consumptionRequest }
            page += state.consumption.outcomes(app: appId, requests: requests, now: now, seed: state.scenario.spec.seed)
                .filter { matches($0, filter) && $0.millis >= filter.start && $0.millis < limit }
        }
        let payloads = ApplePayloads(state: state, spoilers: .init(faults))
        let asked = request.parameter("paginationToken").flatMap { $0.isEmpty ? nil : $0 }
        let token =
            (faults.contains(.repeatedPageToken) ? asked : nil)
            ?? state.pageTokens.encode("history", [Int64(slot), Int64(position), filter.hash, now])
        return reply(
            page, hasMore: hasMore, token: token, payloads: payloads, wrongTypes: faults.contains(.wrongFieldTypes))
    }

    /// The page as Apple writes it: each notification with its send attempts, the token when there is more.
    private func reply(
        _ page: [NotificationEvent], hasMore: Bool, token: String, payloads: ApplePayloads, wrongTypes: Bool
    ) -> StoreReply {
        // Reserved at once: a signed notification is some 15 KB, and a buffer grown by doubling touches twice the memory.
        return .json(capacity: 1024 + page.count * 16_384) { json in
            json.object { object in
                object.array("notificationHistory") { list in
                    // Odd data: Apple sends a notification again (a retried send) and its history lists it twice.
                    let repeated = { (event: NotificationEvent) in
                        OddRow.kind(ofRefund: Int32(truncatingIfNeeded: event.millis), rate: state.options.oddRows)
                            == .repeated
                    }
                    for event in page.flatMap({ repeated($0) ? [$0, $0] : [$0] }) {
                        list.object { item in
                            item.array("sendAttempts") { attempts in
                                for (date, result) in sendAttempts(event) {
                                    attempts.object { attempt in
                                        attempt.field("attemptDate", date)
                                        attempt.field("sendAttemptResult", result)
                                    }
                                }
                            }
                            item.field("signedPayload", jws: payloads.signedNotification(event))
                        }
                    }
                }
                if hasMore { object.field("paginationToken", token) }
                if wrongTypes {
                    object.field("hasMore", hasMore ? 1 : 0)
                } else {
                    object.field("hasMore", hasMore)
                }
            }
        }
    }

    private enum Parsed {
        case success(Filter)
        case failure(StoreReply)
    }

    private func parse(_ body: Data, app: Int, sandbox: Bool) -> Parsed {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            return .failure(AppleError.badRequest())
        }
        func millis(_ name: String) -> Int64? {
            guard let number = object[name] as? NSNumber, !(object[name] is Bool) else { return nil }
            return number.int64Value
        }
        guard let start = millis("startDate") else { return .failure(AppleError.invalidStartDate()) }
        guard let end = millis("endDate") else { return .failure(AppleError.invalidEndDate()) }
        let now = state.now
        let reach = (sandbox ? 30 : 180) * Self.day
        if start < now - reach { return .failure(AppleError.startDateTooFarInPast()) }
        if start > end { return .failure(AppleError.startDateAfterEndDate()) }
        var filter = Filter(start: start, end: end, type: nil, subtype: nil, plan: nil, onlyFailures: false, hash: 0)
        let typeName = object["notificationType"] as? String
        let transactionId = object["transactionId"] as? String
        if typeName != nil, transactionId != nil { return .failure(AppleError.multipleFilters()) }
        if let typeName {
            guard let kind = NotificationEvent.Kind.allCases.first(where: { $0.name == typeName }) else {
                return .failure(AppleError.invalidNotificationType())
            }
            filter.type = kind
        }
        let subtypeName = object["notificationSubtype"] as? String
        if let subtypeName {
            guard let subtype = NotificationEvent.Subtype.allCases.first(where: { $0.name == subtypeName }) else {
                return .failure(AppleError.invalidNotificationType())
            }
            filter.subtype = subtype
        }
        if let transactionId {
            switch AppleCustomerLookup(state: state).find(transactionId, app: app, sandbox: sandbox) {
            case .failed(let reply): return .failure(reply)
            case .found(let plan): filter.plan = plan
            }
        }
        filter.onlyFailures = (object["onlyFailures"] as? Bool) ?? false
        let description = [typeName ?? "", subtypeName ?? "", transactionId ?? "", filter.onlyFailures ? "1" : "0"]
        filter.hash = Int64(
            bitPattern: SplitMix64.mix(
                UInt64(bitPattern: start), UInt64(bitPattern: end), SplitMix64.hash(description.joined(separator: "|")))
        )
        return .success(filter)
    }

    private func matches(_ event: NotificationEvent, _ filter: Filter) -> Bool {
        if let type = filter.type, event.kind != type { return false }
        if let subtype = filter.subtype, event.subtype != subtype { return false }
        if let plan = filter.plan, Int(event.plan) != plan { return false }
        if filter.onlyFailures, sendAttempts(event).last?.1 == "SUCCESS" { return false }
        return true
    }

    /// Delivery attempts of a notification: most succeed at once, some after failures, a few never.
    func sendAttempts(_ event: NotificationEvent) -> [(Int64, String)] {
        let bits = SplitMix64.mix(
            state.scenario.idSalt, UInt64(event.plan), UInt64(event.charge), UInt64(event.kind.rawValue), 3)
        let failures = ["NO_RESPONSE", "TIMED_OUT", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SSL_ISSUE", "PREMATURE_CLOSE"]
        let first = event.millis + Int64(bits % 5000)
        switch bits % 100 {
        case ..<90:
            return [(first, "SUCCESS")]
        case ..<95:
            return [(first, failures[Int(bits >> 8) % failures.count]), (first + 3_600_000, "SUCCESS")]
        default:
            return (0..<3).map { attempt in
                (first + Int64(attempt) * 3_600_000, failures[Int((bits >> 16) + UInt64(attempt)) % failures.count])
            }
        }
    }
}
