import Foundation
import StoreHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A timeout says whether the request went out: a peer that accepts the connection and never answers times out the
/// request (`.timeout`: the store had it); one that never completes the TLS handshake times out before anything was
/// sent (`.connection`). Only the first may mean "nothing came" for a Pub/Sub pull the server held open.
@Suite struct TransportSilentPeerTests {
    /// A loopback socket that takes connections into its backlog and never reads or writes.
    final class SilentPeer {
        let descriptor: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            try #require(bound == 0 && listen(fd, 16) == 0)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            descriptor = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    @Test func aRequestSentAndNeverAnsweredTimesOut() async throws {
        let peer = try SilentPeer()
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(peer.port)/x")!, timeout: 1)
        let error = try await #require(throws: TransportError.self) { try await CurlTransport().send(request) }
        #expect(error.code == .timeout, "\(error)")
    }

    @Test func aHandshakeThatNeverEndsIsNoConnectionNotATimeout() async throws {
        let peer = try SilentPeer()
        let request = HTTPRequest(url: URL(string: "https://127.0.0.1:\(peer.port)/x")!, timeout: 1)
        let error = try await #require(throws: TransportError.self) { try await CurlTransport().send(request) }
        #expect(error.code == .connection && error.message.contains("before the request was sent"), "\(error)")
        #expect(error.isRetryable)
    }
}
