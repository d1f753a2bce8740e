import ArgumentParser

/// `storesim`: the store simulator's command line.
@main
struct StoreSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storesim",
        abstract: "A simulator of the App Store Server API and the Google Play Developer API on loopback.",
        subcommands: [InitCommand.self, ServeCommand.self])
}
