import AppStoreServerAPI
import Foundation
import Testing

/// The notification UUID read before verification: what merges repeats on a page and names a rejected payload.
@Suite struct UnverifiedNotificationTests {
    /// A compact JWS whose payload is `json`, base64url without padding, with a header and signature that are never
    /// checked here.
    static func jws(_ json: String) -> String {
        var payload = Data(json.utf8).base64EncodedString()
        payload = payload.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while payload.hasSuffix("=") { payload.removeLast() }
        return "eyJhbGciOiJFUzI1NiJ9.\(payload).c2lnbmF0dXJl"
    }

    @Test func theClaimedUUIDIsReadFromThePayload() {
        // "?>?" encodes to base64 with "/" and "+": the payload must be read as base64url.
        let signed = Self.jws(
            #"{"notificationType":"REFUND","notificationUUID":"0d5b1c8e-uuid","data":{"note":"?>?"},"version":"2.0"}"#)
        #expect(signed.contains("_") || signed.contains("-"))
        #expect(UnverifiedNotification.uuid(signed) == "0d5b1c8e-uuid")
    }

    @Test func nothingIsClaimedWithoutACompactJWSOrTheField() {
        #expect(UnverifiedNotification.uuid(Self.jws(#"{"notificationType":"REFUND"}"#)) == nil)
        #expect(UnverifiedNotification.uuid("not a jws") == nil)
        #expect(UnverifiedNotification.uuid("a.b") == nil)
        #expect(UnverifiedNotification.uuid("eyJhbGciOiJFUzI1NiJ9.!!!.c2ln") == nil)
        #expect(UnverifiedNotification.uuid(Self.jws("[1, 2]")) == nil)
    }
}
