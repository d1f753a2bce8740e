import AppStoreServerAPI
import Foundation
import Payouts
import PlayDeveloperAPI
import Postgres
import RateLimiting
import StoreHTTP

/// The one place that turns a failure into a process exit code and a line for the operator. Every command and job
/// uses it, so the same failure exits the same way whichever command met it.
///
/// | code | meaning | examples |
/// |------|---------|----------|
/// | 0  | done | |
/// | 1  | failed; look at the log | a store's answer that cannot be used, a pending migration, bad input data |
/// | 64 | the command line is wrong (EX_USAGE) | `--from` after `--to`, `--lead 3x`, an impossible date |
/// | 75 | stopped early, progress saved; run again later (EX_TEMPFAIL) | quota, a store or database outage |
/// | 78 | the configuration is wrong (EX_CONFIG) | a YAML error, a bad `database.url`, a key the store refuses |
public enum ExitStatus {
    /// Done.
    public static let ok: Int32 = 0
    /// Anything else.
    public static let failed: Int32 = 1
    /// The command line is wrong.
    public static let usage: Int32 = 64
    /// Stopped early; progress saved.
    public static let temporary: Int32 = 75
    /// The configuration is wrong.
    public static let configuration: Int32 = 78

    /// The exit code and one line for `error`.
    public static func classify(_ error: any Error) -> (code: Int32, line: String) {
        switch error {
        case let error as ReconcilerError:
            return (error.exitCode, oneLine(error.message))
        case let error as QuotaError:
            return (temporary, oneLine("\(error)"))
        case let error as PlayAPIError:
            switch error.code {
            case .keyFile, .signing, .invalidClient, .invalidGrant, .permissionDenied, .unauthenticated,
                .transportSettings:
                return (configuration, oneLine("\(error)"))
            default:
                return (error.isRetryable ? temporary : failed, oneLine("\(error)"))
            }
        case let error as AppStoreServerAPIError:
            if error.code == .privateKey || error.code == .configuration || error.code == .tokenSigning
                || error.httpStatus == 401
            {
                return (configuration, oneLine("\(error)"))
            }
            return (error.isRetryable ? temporary : failed, oneLine("\(error)"))
        case let error as PayoutError:
            let code = error.code == .configuration ? configuration : error.isRetryable ? temporary : failed
            return (code, oneLine("\(error)"))
        case let error as TransportError:
            let code = error.code == .configuration ? configuration : error.isRetryable ? temporary : failed
            return (code, oneLine("\(error)"))
        case let error as PostgresError:
            if error.isConfiguration {
                return (configuration, oneLine("database.url: \(error)"))
            }
            return (error.isRetryable ? temporary : failed, oneLine("\(error)"))
        default:
            return (failed, oneLine("\(error)"))
        }
    }

    /// The exit code of several outcomes: a failure (1) wins, then usage (64), configuration (78), then "continue
    /// later" (75), then 0.
    public static func worst(_ codes: [Int32]) -> Int32 {
        for code in [failed, usage, configuration, temporary] where codes.contains(code) { return code }
        return codes.first { $0 != 0 } ?? ok
    }

    /// `text` on one line: line breaks and tabs become spaces, so a multi-line server message stays one event.
    public static func oneLine(_ text: String) -> String {
        guard text.contains(where: { $0.isNewline || $0 == "\t" }) else { return text }
        return text.split(whereSeparator: { $0.isNewline || $0 == "\t" }).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        .filter { !$0.isEmpty }.joined(separator: " ")
    }
}
