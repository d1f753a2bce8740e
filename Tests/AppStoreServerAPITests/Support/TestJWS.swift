import Crypto
import Foundation

/// Mints compact JWS for tests.
enum TestJWS {
    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// Signs `payload` with `key` under a header with `alg` and `x5c`.
    static func make(
        payload: [String: Any], x5c: [String]?, alg: String = "ES256", key: P256.Signing.PrivateKey
    ) throws -> String {
        var header: [String: Any] = ["alg": alg]
        if let x5c { header["x5c"] = x5c }
        let input = base64URL(try json(header)) + "." + base64URL(try json(payload))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// The test chain leaf → intermediate → CA, as x5c, and the leaf key.
    static func testChain() throws -> (x5c: [String], key: P256.Signing.PrivateKey) {
        let x5c = [
            try AppleReference.certificateBase64("certs/testLeaf.pem"),
            try AppleReference.certificateBase64("certs/testIntermediate.pem"),
            try AppleReference.certificateBase64("certs/testCA.pem"),
        ]
        let key = try P256.Signing.PrivateKey(pemRepresentation: try AppleReference.text("certs/testLeaf.key"))
        return (x5c, key)
    }

    /// A transaction payload for com.example in Sandbox signed at `signedDate` (ms).
    static func transaction(signedDate: Int64 = 1_700_000_000_000, bundleId: String = "com.example") -> [String: Any] {
        [
            "transactionId": "23456", "originalTransactionId": "12345", "bundleId": bundleId,
            "environment": "Sandbox", "signedDate": signedDate, "price": 10990, "currency": "USD",
            "revocationDate": 1_698_148_950_000, "revocationReason": 1, "revocationType": "REFUND_FULL",
        ]
    }
}
