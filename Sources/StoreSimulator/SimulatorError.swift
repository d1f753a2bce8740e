/// The simulator's one error type: what went wrong, in words that name the file, option or value at fault.
public struct SimulatorError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A scenario spec or file that cannot be used.
        public static let scenario = Code("scenario")
        /// A file that cannot be read or written.
        public static let files = Code("files")
        /// An option out of range.
        public static let options = Code("options")
        /// The server could not start.
        public static let server = Code("server")

        public var description: String { name }
    }

    /// What kind of failure.
    public let code: Code
    /// A sentence for the operator.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "storesim \(code): \(message)" }
}
