import Crypto
import Foundation
import Testing

@testable import StoreSimulator

/// JSON replies go to the wire in the writer's buffer, signed payloads are written without an escaping scan, and
/// signing from bytes signs what signing the same text signs: each the same JSON or JWS as before.
@Suite("Reply bytes")
struct ReplyBytesTests {
    @Test func aJSONReplyKeepsTheWritersBytesAndTheMalformedFaultStillBreaksIt() throws {
        var reply = StoreReply.json { json in json.object { $0.field("hasMore", false) } }
        #expect(Array(try #require(reply.json).readableBytesView) == Array(#"{"hasMore":false}"#.utf8))
        reply.malform()
        let text = String(decoding: Array(try #require(reply.json).readableBytesView), as: UTF8.self)
        #expect(text == #"{"hasMore":false,"unterminated"#)
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) == nil)
    }

    @Test func theMalformedFaultLeavesABinaryBodyAndSpoilsATextOne() {
        var archive = StoreReply(status: 200, body: "", bytes: [0x1F, 0x8B, 0x7D], contentType: "application/a-gzip")
        archive.malform()
        #expect(archive.bytes == [0x1F, 0x8B, 0x7D])
        var error = StoreReply.json(401, #"{"errorCode":4010000}"#)
        error.malform()
        #expect(error.json == nil)
        #expect(error.body == #"{"errorCode":4010000,"unterminated"#)
    }

    @Test func aJWSFieldIsWrittenAsAQuotedStringIsAndParsesBack() throws {
        let chain = try SigningChain.generate()
        let jws = JWSSigner(chain: chain).sign(#"{"a":"b\"c"}"#)
        var quoted = JSONWriter()
        quoted.object { $0.field("signedPayload", jws) }
        var plain = JSONWriter()
        plain.object { $0.field("signedPayload", jws: jws) }
        #expect(plain.utf8 == quoted.utf8)
        let parsed = try JSONSerialization.jsonObject(with: Data(plain.utf8)) as? [String: String]
        #expect(parsed?["signedPayload"] == jws)
    }

    @Test func signingBytesSignsTheSamePayloadAsSigningText() throws {
        let chain = try SigningChain.generate()
        let signer = JWSSigner(chain: chain)
        let payload = #"{"notificationType":"CONSUMPTION_REQUEST","data":{"appAppleId":1},"signedDate":1}"#
        for corrupt in [false, true] {
            let fromText = signer.sign(payload, corrupt: corrupt).split(separator: ".").map(String.init)
            let fromBytes = signer.sign(utf8: Array(payload.utf8), corrupt: corrupt).split(separator: ".").map(
                String.init)
            try #require(fromText.count == 3 && fromBytes.count == 3)
            #expect(fromBytes[0] == fromText[0])
            #expect(fromBytes[1] == fromText[1])
            let signature = try P256.Signing.ECDSASignature(
                rawRepresentation: try #require(Base64URL.decode(Substring(fromBytes[2]))))
            let input = Data((fromBytes[0] + "." + fromBytes[1]).utf8)
            #expect(chain.leafKey.publicKey.isValidSignature(signature, for: input) == !corrupt)
        }
    }
}
