import Crypto
import Foundation
import StoreSimulator
import _CryptoExtras

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A raw HTTP client for the tests: URLSession, hand-made JWTs and JSONSerialization, nothing shared with the
/// simulator's or storerecon's code.
struct TestClient {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data

        var json: [String: Any] {
            get throws {
                guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
                    throw TestFailure("not a JSON object: \(String(decoding: body, as: UTF8.self))")
                }
                return object
            }
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    let simulator: StoreSimulator
    let session: URLSession

    init(_ simulator: StoreSimulator) {
        self.simulator = simulator
        let configuration = URLSessionConfiguration.ephemeral
        // Generous: the whole suite runs in parallel on two cores, and other suites load the same thread pool.
        configuration.timeoutIntervalForRequest = 120
        session = URLSession(configuration: configuration)
    }

    func send(
        _ method: String, _ url: URL, bearer: String? = nil, body: Data? = nil, contentType: String? = nil
    ) async throws -> Answer {
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        request.httpBody = body
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw TestFailure("no HTTP response") }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return Answer(status: http.statusCode, headers: headers, body: data)
    }

    // MARK: Google

    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func jsonText(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A Google service-account assertion; claims override the defaults.
    func googleAssertion(_ overrides: [String: Any] = [:], removing: [String] = [], signingKeyPEM: String? = nil)
        throws -> String
    {
        let account = simulator.keys.serviceAccount
        let now = simulator.clock.nowMillis() / 1000
        var claims: [String: Any] = [
            "iss": account.clientEmail, "scope": "https://www.googleapis.com/auth/androidpublisher",
            "aud": simulator.googleTokenURL.absoluteString, "iat": now, "exp": now + 3600,
        ]
        for (name, value) in overrides { claims[name] = value }
        for name in removing { claims[name] = nil }
        let header = try Self.jsonText(["alg": "RS256", "typ": "JWT", "kid": account.privateKeyId])
        let input = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(try Self.jsonText(claims).utf8))
        let key = try _RSA.Signing.PrivateKey(unsafePEMRepresentation: signingKeyPEM ?? account.privateKeyPEM)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    /// Posts an assertion to the token endpoint.
    func exchange(_ assertion: String) async throws -> Answer {
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        return try await send(
            "POST", simulator.googleTokenURL, body: Data(form.utf8), contentType: "application/x-www-form-urlencoded")
    }

    /// A fresh Google access token, for the Play Developer API unless `scope` names others (space-separated).
    func googleAccessToken(scope: String? = nil) async throws -> String {
        let answer = try await exchange(try googleAssertion(scope.map { ["scope": $0] } ?? [:]))
        guard answer.status == 200, let token = try answer.json["access_token"] as? String else {
            throw TestFailure("token endpoint answered \(answer.status)")
        }
        return token
    }

    func voidedURL(_ query: [String: String], package: String = "com.example.demo") -> URL {
        var components = URLComponents(
            url: simulator.googleAPIBaseURL.appendingPathComponent(
                "androidpublisher/v3/applications/\(package)/purchases/voidedpurchases"),
            resolvingAgainstBaseURL: false)!
        if !query.isEmpty {
            components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        }
        return components.url!
    }

    func subscriptionURL(_ token: String, package: String = "com.example.demo") -> URL {
        simulator.googleAPIBaseURL.appendingPathComponent(
            "androidpublisher/v3/applications/\(package)/purchases/subscriptionsv2/tokens/\(token)")
    }

    // MARK: Apple

    /// An App Store Server API bearer token; claims override the defaults (`iat` is left out unless given).
    func appleBearer(_ overrides: [String: Any] = [:], keyId: String? = nil, signingKeyPEM: String? = nil) throws
        -> String
    {
        let key = simulator.keys.appStoreKey
        let now = simulator.clock.nowMillis() / 1000
        var claims: [String: Any] = [
            "iss": key.issuerId, "aud": "appstoreconnect-v1", "bid": "com.example.demo", "exp": now + 300,
        ]
        for (name, value) in overrides { claims[name] = value }
        let header = try Self.jsonText(["alg": "ES256", "typ": "JWT", "kid": keyId ?? key.keyId])
        let input = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(try Self.jsonText(claims).utf8))
        let signer = try P256.Signing.PrivateKey(pemRepresentation: signingKeyPEM ?? key.privateKeyPEM)
        return input + "." + Self.base64URL(try signer.signature(for: Data(input.utf8)).rawRepresentation)
    }

    func appleURL(_ path: String, sandbox: Bool = false, query: [String: String] = [:]) -> URL {
        let base = sandbox ? simulator.appleSandboxBaseURL : simulator.appleProductionBaseURL
        var components = URLComponents(url: base.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.key, value: $0.value) } }
        return components.url!
    }

    /// Decodes the payload of a compact JWS without verifying it.
    static func payload(_ jws: String) throws -> [String: Any] {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { throw TestFailure("not a compact JWS") }
        var text = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw TestFailure("bad JWS payload") }
        return object
    }
}

/// Key material shared by every test (an RSA key takes a moment to generate).
enum TestKeys {
    static let shared: SimulatorKeys? = try? SimulatorKeys.generate(seed: 99)

    /// Options for a small scenario on a fixed clock with the shared keys.
    static func options(seed: UInt64 = 11, subscriptions: Int = 400, refunds: Int? = nil) -> SimulatorOptions {
        var options = SimulatorOptions(
            scenario: ScenarioSpec(seed: seed, subscriptions: subscriptions, refunds: refunds))
        options.keys = shared
        return options
    }
}
