import Foundation
import Logging
import Payouts
import PlayDeveloperAPI
import RateLimiting
import StoreHTTP

extension StoreClients {
    /// Report files are bigger than API pages: a year of a large app's earnings zip is tens of megabytes.
    public static let reportTransport = CurlTransport(maxResponseBytes: 1 << 30)

    /// Where `sync payouts` fetches an app's financial reports, or `nil` when the app is not set up for it
    /// (`earningsBucket` for Google, `vendorNumber` and the App Store Connect key for Apple).
    /// - Throws: `PlayAPIError` / ``PayoutError`` naming the key file when it cannot be read (exit 78).
    public static func payoutSource(for app: AppConfig, gate: any QuotaGate, logger: Logger) throws
        -> PayoutSync.Source?
    {
        switch app.platform {
        case .google:
            guard let bucket = app.earningsBucket, let file = app.serviceAccountFile else { return nil }
            let key = try ServiceAccountKey.load(fromFile: file, logger: logger)
            let client = CloudStorageClient(
                app: app.id, key: key, tokenURL: app.tokenURL.flatMap(URL.init(string:)),
                baseURL: app.storageBaseURL.flatMap(URL.init(string:)) ?? CloudStorageClient.defaultBaseURL,
                transport: reportTransport, gate: gate, logger: logger)
            return .google(client, bucket: bucket)
        case .apple:
            guard let vendor = app.vendorNumber, let issuer = app.connectIssuerId, let keyId = app.connectKeyId,
                let keyFile = app.connectPrivateKeyFile
            else { return nil }
            let token = try ConnectToken(privateKeyFile: keyFile, keyId: keyId, issuerId: issuer)
            let client = FinanceReportsClient(
                app: app.id,
                baseURL: app.connectBaseURL.flatMap(URL.init(string:)) ?? FinanceReportsClient.defaultBaseURL,
                token: token, transport: reportTransport, gate: gate, logger: logger)
            return .apple(client, vendorNumber: vendor)
        }
    }
}
