import Testing

@testable import StoreHTTP

/// libcurl reads a timeout of 0 as "wait forever": a request's timeout that is no positive number never reaches it.
@Suite struct TransportTimeoutTests {
    @Test(arguments: [0, -1, Double.nan, Double.infinity, -Double.infinity])
    func aTimeoutThatIsNoPositiveNumberTakesTheDefault(seconds: Double) {
        #expect(CurlRequestSetup.milliseconds(seconds) == 30_000)
    }

    @Test func aTimeoutIsSentInMillisecondsAndNeverRoundedToZero() {
        #expect(CurlRequestSetup.milliseconds(9) == 9_000)
        #expect(CurlRequestSetup.milliseconds(0.0001) == 1)
        #expect(CurlRequestSetup.milliseconds(1e9) == 86_400_000)
    }
}
