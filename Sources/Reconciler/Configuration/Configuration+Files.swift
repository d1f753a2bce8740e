import Foundation

extension Configuration {
    /// Makes the apps' relative key and certificate paths relative to `directory` (the configuration file's): a
    /// unit or cron line that starts the binary elsewhere finds the files next to its configuration.
    mutating func resolveFiles(against directory: URL) {
        func resolve(_ path: String) -> String {
            path.hasPrefix("/") ? path : directory.appendingPathComponent(path).standardizedFileURL.path
        }
        for index in apps.indices {
            apps[index].privateKeyFile = apps[index].privateKeyFile.map(resolve)
            apps[index].serviceAccountFile = apps[index].serviceAccountFile.map(resolve)
            apps[index].connectPrivateKeyFile = apps[index].connectPrivateKeyFile.map(resolve)
            apps[index].rootCertificates = apps[index].rootCertificates.map(resolve)
        }
    }
}
