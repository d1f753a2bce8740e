import Foundation
import RateLimiting
import StoreHTTP
import Testing

@testable import PlayDeveloperAPI

extension PlayDeveloperClientTests {
    @Test func unknownSubscriptionIsNotFound() async throws {
        let harness = try ClientHarness([.token(), try error(404, "error-404.json")])
        let token = "secret-purchase-token-0123456789"
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.subscriptionV2(packageName: "com.acme.app", token: token, purpose: .incremental)
        }
        #expect(failure.code == .notFound && !failure.isRetryable)
        #expect(
            failure.request
                == "GET /androidpublisher/v3/applications/com.acme.app/purchases/subscriptionsv2/tokens/secret-p…")
        #expect(!failure.description.contains(token))
    }

    /// A row of the wrong JSON type is set aside with its index and field path (to be quarantined); the page's
    /// other rows are returned: one odd row must not stop the page.
    @Test func aRowOfTheWrongTypeIsSetAsideNamingItsField() async throws {
        let body =
            #"{"voidedPurchases":[{"purchaseToken":"a","voidedTimeMillis":"1"},{"purchaseToken":"b","voidedTimeMillis":true}]}"#
        let harness = try ClientHarness([.token(), .json(200, body)])
        let page = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        #expect(page.voidedPurchases.map(\.purchaseToken) == ["a"])
        let odd = try #require(page.undecodableRows.first)
        #expect(page.undecodableRows.count == 1)
        #expect(odd.index == 1 && odd.field == "voidedTimeMillis")
        #expect(String(decoding: odd.rawJSON, as: UTF8.self).contains(#""purchaseToken":"b""#))
    }

    /// A page whose envelope is wrong (not a row) is malformed as a whole, naming the request and the field.
    @Test func malformedPageNamesRequestAndField() async throws {
        let body = #"{"voidedPurchases":[],"tokenPagination":{"nextPageToken":7}}"#
        let harness = try ClientHarness([.token(), .json(200, body)])
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .malformedResponse)
        #expect(failure.field == "tokenPagination.nextPageToken")
        #expect(failure.request == "GET " + Self.voidedPath)
        #expect(failure.description.contains("tokenPagination.nextPageToken"))
    }

    @Test func truncatedPageIsMalformed() async throws {
        let body = try Fixtures.data("voidedpurchases-list.json")
        let harness = try ClientHarness([.token(), .json(200, data: body.prefix(200))])
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .malformedResponse && failure.message.contains("truncated"))
    }

    @Test func noSecretEverAppearsInErrorText() async throws {
        let harness = try ClientHarness([.token("ya29.SECRET-ACCESS"), try error(400, "error-503.json")])
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(
                packageName: "com.acme.app", token: "PAGE-TOKEN-SECRET", purpose: .incremental)
        }
        #expect(failure.code == .badRequest)
        for secret in ["ya29.SECRET-ACCESS", "PAGE-TOKEN-SECRET", "PRIVATE KEY"] {
            #expect(!failure.description.contains(secret))
            #expect(!String(reflecting: failure).contains(secret))
        }
        let assertion = String(decoding: try #require(harness.transport.requests.first?.body), as: UTF8.self)
        #expect(!failure.description.contains(String(assertion.suffix(40))))
    }
}
