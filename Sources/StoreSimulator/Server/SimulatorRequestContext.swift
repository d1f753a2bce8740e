import Hummingbird

/// The request context: Hummingbird's core storage, plus a way to close the connection so that a fault can
/// end it without an answer or mid-answer.
struct SimulatorRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// Closes the request's connection.
    let closeConnection: @Sendable () async -> Void

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        let channel = source.channel
        closeConnection = { try? await channel.close().get() }
    }
}
