import Foundation
import Testing

@testable import AppStoreServerAPI

/// The one-pass base64url decoder, the compact JWS split and the path encoding every Apple call goes through
/// (issue 39: cut for CPU), checked against Foundation and by hand.
@Suite("Hot path encodings")
struct HotPathEncodingTests {
    @Test func base64URLDecodesWhatFoundationEncodes() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let standard = Data(bytes).base64EncodedString()
            let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            var unpadded = url
            while unpadded.hasSuffix("=") { unpadded.removeLast() }
            #expect(Base64URL.decode(Array(standard.utf8)) == bytes, "standard, \(length) bytes")
            #expect(Base64URL.decode(Array(url.utf8)) == bytes, "url, padded, \(length) bytes")
            #expect(Base64URL.decode(unpadded.utf8) == bytes, "url, unpadded, \(length) bytes")
            #expect(Base64URL.decode(Array(unpadded.utf8)[...]) == bytes, "a slice, \(length) bytes")
        }
    }

    @Test func base64URLRefusesWhatIsNotBase64() {
        #expect(Base64URL.decode("QUJD".utf8) == Array("ABC".utf8))
        #expect(Base64URL.decode("".utf8) == [])
        #expect(Base64URL.decode("QQ".utf8) == [0x41])
        #expect(Base64URL.decode("QUI".utf8) == [0x41, 0x42])
        // A single character left over, padding in the middle, too much padding, a character of neither alphabet.
        for bad in ["Q", "QUJDR", "Q=Q=", "QQ===", "QU.D", "QU D", "QUJD\n", "é"] {
            #expect(Base64URL.decode(bad.utf8) == nil, "\(bad)")
        }
    }

    @Test func aCompactJWSSplitsIntoThreeNonEmptyParts() throws {
        let jws = try CompactJWS("aGVhZA.cGF5bG9hZA.c2ln")
        #expect(String(decoding: jws.header, as: UTF8.self) == "aGVhZA")
        #expect(String(decoding: jws.payload, as: UTF8.self) == "cGF5bG9hZA")
        #expect(String(decoding: jws.signature, as: UTF8.self) == "c2ln")
        #expect(String(decoding: jws.signingInput, as: UTF8.self) == "aGVhZA.cGF5bG9hZA")
        for bad in ["", "a", "a.b", ".b.c", "a..c", "a.b.", "a.b.c.d", "...", "a.b.c."] {
            #expect(throws: AppStoreServerAPIError.self, "\(bad)") { try CompactJWS(bad) }
        }
    }

    @Test func pathSegmentsAreEncodedOnlyWhenTheyNeedIt() throws {
        #expect(APIRequest.encode("2000000123456789") == "2000000123456789")
        #expect(APIRequest.encode("A-z_0.9~") == "A-z_0.9~")
        #expect(APIRequest.encode("a b/c?d") == "a%20b%2Fc%3Fd")
        #expect(APIRequest.encode("é") == "%C3%A9")
        let request = APIRequest(
            api: .appleTransactionHistory, method: "GET", pathSegments: ["inApps", "v1", "transactions", "1 2"],
            isTransactionLookup: true)
        #expect(request.label == "GET /inApps/v1/transactions/1%202")
        let url = try #require(request.url(base: URL(string: "https://example.com/")!))
        #expect(url.absoluteString == "https://example.com/inApps/v1/transactions/1%202")
    }
}
