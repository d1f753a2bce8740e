import Crypto
import Foundation

/// Opaque, tamper-evident page tokens (Google `nextPageToken`, Apple `paginationToken` and `revision`): a few
/// integers and an HMAC, base64url. The integers say where the next page starts, so paging stays exact however
/// many rows arrive meanwhile.
struct PageToken: Sendable {
    private let key: SymmetricKey

    init(seed: UInt64) {
        var random = SplitMix64(seed: SplitMix64.mix(seed, 0x70C))
        key = SymmetricKey(data: (0..<4).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } })
    }

    /// Encodes fields under a kind tag (so one endpoint's token is not accepted by another).
    func encode(_ kind: String, _ fields: [Int64]) -> String {
        let payload = kind + ":" + fields.map(String.init).joined(separator: ":")
        let mac = HMAC<SHA256>.authenticationCode(for: Data(payload.utf8), using: key)
        return Base64URL.encode(payload) + "." + Base64URL.encode(Array(mac).prefix(12))
    }

    /// Decodes a token of `kind` with `count` fields; nil when it was not made here or was altered.
    func decode(_ kind: String, _ token: String, count: Int) -> [Int64]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payloadBytes = Base64URL.decode(parts[0]), let mac = Base64URL.decode(parts[1])
        else { return nil }
        let expected = HMAC<SHA256>.authenticationCode(for: Data(payloadBytes), using: key)
        guard Array(expected).prefix(12).elementsEqual(mac) else { return nil }
        let payload = String(decoding: payloadBytes, as: UTF8.self)
        let pieces = payload.split(separator: ":", omittingEmptySubsequences: false)
        guard pieces.count == count + 1, pieces[0] == kind else { return nil }
        let fields = pieces.dropFirst().compactMap { Int64($0) }
        return fields.count == count ? fields : nil
    }
}
