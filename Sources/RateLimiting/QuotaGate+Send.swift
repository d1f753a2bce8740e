import StoreHTTP

/// How often a grant that came too late to the transport is asked for again before the call is sent anyway: a host
/// slower than every margin must still make progress.
public enum LateGrants {
    /// Grants left unused before the next one is used whatever its time.
    public static let most = 2
}

extension QuotaGate {
    /// Asks the gate, then has `send` make the call by the time its grant allows (`acquire`'s leave-by, passed to
    /// `send` for its `HTTPRequest.leaveBy`). A grant that reaches the transport later (``TransportError`` `.late`:
    /// the call was not sent) is left unused and asked for again, at most ``LateGrants/most`` times: sent late, the
    /// call could meet the next window's calls at the store and be refused. The call is bracketed by
    /// ``beginCall(app:api:)`` and ``endCall(app:api:)``, so the gate can pace it by its answers. Every store client
    /// sends through here.
    /// - Parameters:
    ///   - onLate: told of each grant left unused (for the log).
    ///   - send: builds the request with this leave-by time (nil: no limit) and sends it; called once per grant.
    public func sendGranted(
        app: String, api: StoreAPI, purpose: CallPurpose, onLate: (TransportError) -> Void = { _ in },
        _ send: (_ leaveBy: ContinuousClock.Instant?) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        try await beginCall(app: app, api: api)
        do {
            let response = try await sendRetakingLate(app: app, api: api, purpose: purpose, onLate: onLate, send)
            await endCall(app: app, api: api, answeredAgo: response.answeredAt.map { .now - $0 } ?? .zero)
            return response
        } catch {
            await endCall(app: app, api: api)
            throw error
        }
    }

    private func sendRetakingLate(
        app: String, api: StoreAPI, purpose: CallPurpose, onLate: (TransportError) -> Void,
        _ send: (_ leaveBy: ContinuousClock.Instant?) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var late = 0
        while true {
            var leaveBy = try await acquire(app: app, api: api, purpose: purpose)
            if late >= LateGrants.most { leaveBy = nil }
            do {
                return try await send(leaveBy)
            } catch let error as TransportError where error.code == .late {
                late += 1
                onLate(error)
            }
        }
    }
}
