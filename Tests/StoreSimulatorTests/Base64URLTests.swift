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

    /// Against Foundation's base64 with the URL alphabet swapped in by hand, for every length up to 64.
    @Test func matchesFoundationForEveryLengthAndRejectsWhatIsNotBase64url() {
        var random = SplitMix64(seed: 5)
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let expected = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == expected, "length \(length)")
            #expect(Base64URL.decode(Substring(expected)) == bytes, "length \(length)")
        }
        #expect(Base64URL.decode("+/8") == [0xFB, 0xFF], "plain base64's characters are taken too")
        #expect(Base64URL.decode("-_8=") == nil)
        #expect(Base64URL.decode("abcde") == nil, "five characters cannot end a group")
        #expect(Base64URL.decode("ab.c") == nil)
        #expect(Base64URL.decode("ab\u{e9}") == nil)
    }
}
