import Foundation
import StoreHTTP
import Testing

@testable import PlayDeveloperAPI

extension ServiceAccountAuthenticatorTests {
    static let refused = RecordingTransport.Reply.json(400, #"{"error":"invalid_grant"}"#)

    /// Renewal starts five minutes before expiry: when it fails, the token in hand keeps every call going until it
    /// expires, and renewal is tried again a minute later.
    @Test func aFailedRenewalKeepsTheTokenInHandUntilItExpires() async throws {
        let transport = RecordingTransport([.token("ya29.first"), Self.refused, .token("ya29.second")])
        let time = ManualTime()
        let authenticator = try makeAuthenticator(transport, time: time)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.first")
        time.advance(by: 3600 - 299)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.first")
        #expect(transport.requests.count == 2)
        time.advance(by: 30)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.first")
        #expect(transport.requests.count == 2)
        time.advance(by: 31)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.second")
    }

    @Test func aFailedRenewalOfAnExpiredTokenIsAnError() async throws {
        let transport = RecordingTransport([.token("ya29.first", expiresIn: 60), Self.refused])
        let time = ManualTime()
        let authenticator = try makeAuthenticator(transport, time: time)
        _ = try await authenticator.accessToken(purpose: .incremental)
        time.advance(by: 61)
        let error = try await #require(throws: PlayAPIError.self) {
            try await authenticator.accessToken(purpose: .incremental)
        }
        #expect(error.code == .invalidGrant)
    }

    /// The task signing in is cancelled (a voided slice stopped because another failed) between two attempts: the
    /// calls waiting for its token are not cancelled with it, they sign in for themselves.
    @Test func aCancelledSignInDoesNotCancelTheCallsWaitingForIt() async throws {
        let transport = HeldTransport(reply: .json(503, "{}"))
        let authenticator = try makeAuthenticator(transport)
        let leader = Task { try await authenticator.accessToken(purpose: .incremental) }
        await transport.waitForRequests(1)
        let waiter = Task { () -> (any Error)? in
            do {
                _ = try await authenticator.accessToken(purpose: .incremental)
                return nil
            } catch {
                return error
            }
        }
        while await authenticator.waiterCount < 1 { await Task.yield() }
        leader.cancel()
        transport.release()
        await #expect(throws: CancellationError.self) { try await leader.value }
        let failure = await waiter.value
        // The waiter's own sign-in met the same failing endpoint: the store's error, not another task's cancellation.
        #expect((failure as? PlayAPIError)?.code == .serverError, "\(String(describing: failure))")
        #expect(transport.requestCount >= 2)
    }
}
