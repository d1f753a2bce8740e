import Foundation
import StoreHTTP
import Synchronization

/// The real HTTP transport, with a hook that runs just before each voided-purchases request goes out, so a test
/// can make something happen at a known call (move the simulator clock, switch a fault on or off, ask for a
/// shutdown) instead of at a moment picked by timing.
final class ScriptedTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let calls = Mutex(0)
    private let hook: @Sendable (_ call: Int) -> Void

    /// - Parameters:
    ///   - base: the transport that really sends (a fresh `CurlTransport` by default).
    ///   - hook: called with the 1-based number of each voided-purchases request, before it is sent.
    init(base: any HTTPTransport = CurlTransport(), before hook: @escaping @Sendable (_ call: Int) -> Void) {
        self.base = base
        self.hook = hook
    }

    /// Voided-purchases requests sent so far (retries included).
    var voidedCalls: Int { calls.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if request.url.path.hasSuffix("/voidedpurchases") {
            let call = calls.withLock { count in
                count += 1
                return count
            }
            hook(call)
        }
        return try await base.send(request)
    }
}
