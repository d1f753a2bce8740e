import Foundation
import StoreHTTP
import Testing

/// Stores never redirect their API calls. A redirect (from a compromised proxy, or to plain http) must not be
/// followed: following it would carry the bearer token to another host, in clear text if the target is http.
@Suite struct TransportRedirectTests {
    @Test(arguments: [301, 302, 303, 307, 308])
    func redirectsAreNotFollowedAndCarryNoCredential(status: Int) async throws {
        let target = try LoopbackResponder([.init(status: 200, body: "{}")])
        defer { target.stop() }
        let origin = try LoopbackResponder([
            .init(status: status, headers: ["Location": "http://127.0.0.1:\(target.port)/stolen"], body: "")
        ])
        defer { origin.stop() }
        let request = HTTPRequest(
            url: URL(string: "http://127.0.0.1:\(origin.port)/inApps/v2/refund/lookup/1")!,
            headers: ["Authorization": "Bearer secret-token"], timeout: 10)
        let response = try await CurlTransport().send(request)
        #expect(response.status == status)
        #expect(target.requests.isEmpty, "the redirect was followed: \(target.requests)")
    }
}
