import Foundation
import Testing

@testable import StoreSimulator

/// The simulator's base64url: the URL alphabet, no padding, and back (RFC 7515 §2).
@Suite("Base64URL")
struct Base64URLTests {
    @Test func encodesTheURLAlphabetWithoutPaddingAndDecodesBack() {
        // 0xFB 0xFF is "+/8=" in base64; 0xFB 0xEF 0xBE is "++++".
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode([0xFB, 0xEF, 0xBE]) == "----")
        #expect(Base64URL.encode("{\"alg\":\"ES256\"}") == "eyJhbGciOiJFUzI1NiJ9")
        #expect(Base64URL.encode([UInt8]()) == "")
        let bytes = (0...255).map { UInt8($0) }
        #expect(Base64URL.decode(Substring(Base64URL.encode(bytes))) == bytes)
    }
}
