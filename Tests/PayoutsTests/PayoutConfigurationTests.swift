import Foundation
import Reconciler
import Testing

/// The financial-report keys of `apps[]`: each platform's own, complete or absent.
@Suite struct PayoutConfigurationTests {
    static let apple = """
        apps:
          - id: ios
            platform: apple
            bundleId: com.x
            environment: xcode
            issuerId: i
            keyId: k
            privateKeyFile: /k.p8

        """

    func load(_ text: String) throws -> Configuration {
        try ConfigurationLoader(environment: [:]).load(text: text, source: "test.yaml")
    }

    @Test func appleReportsNeedTheWholeConnectKey() throws {
        let error = try #require(throws: ReconcilerError.self) {
            try load(Self.apple + "    vendorNumber: \"85012345\"\n    connectIssuerId: i\n")
        }
        #expect(error.message.contains("apps[0].connectKeyId"), "\(error)")
        let loaded = try load(
            Self.apple
                + "    vendorNumber: \"85012345\"\n    connectIssuerId: i\n    connectKeyId: c\n"
                + "    connectPrivateKeyFile: /c.p8\n    connectBaseURL: http://127.0.0.1:9/\n")
        #expect(loaded.apps[0].fetchesPayouts)
        #expect(loaded.apps[0].vendorNumber == "85012345")
        #expect(try !load(Self.apple).apps[0].fetchesPayouts)
    }

    @Test func eachPlatformKeepsToItsOwnKeys() throws {
        let error = try #require(throws: ReconcilerError.self) {
            try load(Self.apple + "    earningsBucket: pubsite_prod_rev_1\n")
        }
        #expect(error.message.contains("apps[0].earningsBucket"), "\(error)")
        let google = """
            apps:
              - id: droid
                platform: google
                packageName: com.x
                serviceAccountFile: /sa.json
                earningsBucket: pubsite_prod_rev_1
                storageBaseURL: http://storage.example.com

            """
        let insecure = try #require(throws: ReconcilerError.self) { try load(google) }
        #expect(insecure.message.contains("apps[0].storageBaseURL"), "\(insecure)")
        let loaded = try load(
            google.replacingOccurrences(of: "http://storage.example.com", with: "https://s.example.com"))
        #expect(loaded.apps[0].fetchesPayouts && loaded.apps[0].earningsBucket == "pubsite_prod_rev_1")
    }
}
