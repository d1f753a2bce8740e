import Foundation

extension SignedPayloadVerifier {
    /// The kinds of signed payload, each named in an error with the field that identifies it.
    enum PayloadKind: String {
        case transaction = "signed transaction"
        case renewalInfo = "signed renewal info"
        case notification = "signed notification"

        /// The payload's field that identifies it.
        var identity: String {
            switch self {
            case .transaction: "transactionId"
            case .renewalInfo: "originalTransactionId"
            case .notification: "notificationUUID"
            }
        }
    }

    /// Runs the checks of one payload; an error they throw names it (`signed transaction 2000000123: ...`, or
    /// `(unreadable)` when its payload cannot be read), so a log line or a quarantine reason says which one failed.
    func naming<T>(_ kind: PayloadKind, _ jws: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch var error as AppStoreServerAPIError {
            error.message =
                "\(kind.rawValue) \(Self.identity(of: jws, field: kind.identity) ?? "(unreadable)"): "
                + error.message
            throw error
        }
    }

    /// The payload's `field` (a string or a number), at most 64 characters, when it can be read.
    static func identity(of jws: String, field: String) -> String? {
        guard let parts = try? CompactJWS(jws), let bytes = Base64URL.decode(parts.payload),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let value = object[field], value is String || value is NSNumber
        else { return nil }
        return String(String(describing: value).prefix(64))
    }
}
