/// An error from a storerecon job or command, carrying what an operator needs to act on it.
///
/// Its `description` is one line, safe to log: it never contains a secret, a token or a SQL parameter.
public struct ReconcilerError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is; it decides the exit code.
    public enum Code: String, Sendable {
        /// The configuration is missing, unknown or wrong (exit 78).
        case configuration
        /// The schema is behind, ahead, or an applied migration was edited (exit 1).
        case migration
        /// Input data (a CSV file, an id list) is invalid (exit 1).
        case input
        /// The command line is wrong: a malformed or impossible date, `--from` after `--to`, an unknown `--by`
        /// column, an option the command cannot combine (exit 64).
        case usage
        /// A store quota or a retryable outage stopped the job early; progress is saved (exit 75).
        case temporary
        /// A store's answers cannot be followed: a page token repeated in one chain, an Apple `revision` that does
        /// not move while `hasMore` is true, a chain longer than any window holds (exit 1; what came before is kept).
        case storeLoop
        /// Anything else (exit 1).
        case failed
    }

    /// What kind of failure this is.
    public var code: Code
    /// One line for the operator.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The process exit code the CLI uses for this error (sysexits.h values where they fit; see ``ExitStatus``).
    public var exitCode: Int32 {
        switch code {
        case .configuration: return ExitStatus.configuration
        case .temporary: return ExitStatus.temporary
        case .usage: return ExitStatus.usage
        case .migration, .input, .failed, .storeLoop: return ExitStatus.failed
        }
    }

    public var description: String { message }
}
