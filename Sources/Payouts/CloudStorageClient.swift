import Foundation
import Logging
import PlayDeveloperAPI
import RateLimiting
import StoreHTTP
import Synchronization

/// The Cloud Storage JSON API, read only, as the app's service account: lists the earnings objects of the
/// developer account's bucket and downloads them. Every call passes the quota gate as `StoreAPI.googleCloudStorage`.
///
/// [Objects: list](https://cloud.google.com/storage/docs/json_api/v1/objects/list),
/// [Objects: get](https://cloud.google.com/storage/docs/json_api/v1/objects/get).
public struct CloudStorageClient: Sendable {
    /// One object of a listing.
    public struct Object: Sendable, Equatable, Decodable {
        public var name: String
        public var size: String?
        public var md5Hash: String?
        public var generation: String?
        public var updated: String?
    }

    struct ListPage: Decodable {
        var items: [Object]?
        var nextPageToken: String?
    }

    /// Google's host.
    public static let defaultBaseURL = URL(string: "https://storage.googleapis.com")!

    let baseURL: URL
    let authenticator: ServiceAccountAuthenticator
    let call: ReportCall

    /// Creates a client signed in as `key` with the `devstorage.read_only` scope.
    public init(
        app: String, key: ServiceAccountKey, tokenURL: URL? = nil, baseURL: URL = Self.defaultBaseURL,
        transport: any HTTPTransport, gate: any QuotaGate,
        policy: RetryPolicy = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 30), timing: RetryTiming = .live,
        logger: Logger
    ) {
        self.baseURL = baseURL
        self.authenticator = ServiceAccountAuthenticator(
            app: app, key: key, tokenURL: tokenURL, transport: transport, quotaGate: gate, logger: logger,
            scope: ServiceAccountAuthenticator.storageReadOnlyScope)
        self.call = ReportCall(
            app: app, api: .googleCloudStorage, transport: transport, gate: gate, policy: policy, timing: timing,
            logger: logger)
    }

    /// `text` percent-encoded for a query value (RFC 3986 unreserved characters kept).
    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Every object of `bucket` whose name starts with `prefix`, following `nextPageToken` until it is absent (a page
    /// may hold fewer than `maxResults` while more follow).
    public func list(bucket: String, prefix: String, purpose: CallPurpose) async throws -> [Object] {
        var objects: [Object] = []
        var pageToken: String?
        var seen: Set<String> = []
        repeat {
            var components = URLComponents(
                url: baseURL.appendingPathComponent("storage/v1/b/\(bucket)/o"), resolvingAgainstBaseURL: false)!
            // Every value encoded but the unreserved characters: a token holding `+` must not be read as a space.
            components.percentEncodedQueryItems =
                [
                    URLQueryItem(name: "prefix", value: Self.queryValue(prefix)),
                    URLQueryItem(name: "maxResults", value: "1000"),
                ] + (pageToken.map { [URLQueryItem(name: "pageToken", value: Self.queryValue($0))] } ?? [])
            let url = components.url!
            let response = try await send("GET /storage/v1/b/\(bucket)/o", url: url, purpose: purpose)
            guard response.status != 404 else {
                throw PayoutError(.configuration, "earningsBucket \(bucket): no such bucket", httpStatus: 404)
            }
            guard let page = try? JSONDecoder().decode(ListPage.self, from: response.body) else {
                throw PayoutError(.badAnswer, "the object listing of \(bucket) is not a storage#objects answer")
            }
            objects += page.items ?? []
            pageToken = page.nextPageToken
            if let token = pageToken, !seen.insert(token).inserted {
                throw PayoutError(.badAnswer, "the object listing of \(bucket) repeated a nextPageToken")
            }
        } while pageToken != nil
        return objects
    }

    /// The bytes of object `name` (`alt=media`; the name percent-encoded, `/` as `%2F`).
    public func download(bucket: String, name: String, purpose: CallPurpose) async throws -> Data {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
        guard
            let url = URL(
                string: baseURL.absoluteString.trimmingSuffix("/") + "/storage/v1/b/\(bucket)/o/\(encoded)?alt=media")
        else { throw PayoutError(.configuration, "earningsBucket \(bucket): cannot be put in a URL") }
        let response = try await send("GET /storage/v1/b/\(bucket)/o/\(name)", url: url, purpose: purpose)
        guard response.status != 404 else {
            throw PayoutError(.badAnswer, "\(name) is listed in \(bucket) but cannot be downloaded (404)")
        }
        return response.body
    }

    private func send(_ label: String, url: URL, purpose: CallPurpose) async throws -> HTTPResponse {
        let authenticator = self.authenticator
        let holder = TokenHolder()
        return try await call.send(
            label, purpose: purpose,
            makeRequest: {
                let token = try await authenticator.accessToken(purpose: purpose)
                holder.set(token)
                return HTTPRequest(url: url, headers: ["Authorization": "Bearer \(token.value)"], timeout: 300)
            },
            renew: {
                if let token = holder.get() { await authenticator.invalidate(token) }
            })
    }
}

/// The access token of the attempt in flight, so a 401 drops exactly that one.
private final class TokenHolder: Sendable {
    private let token = Mutex<AccessToken?>(nil)
    func set(_ value: AccessToken) { token.withLock { $0 = value } }
    func get() -> AccessToken? { token.withLock { $0 } }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
