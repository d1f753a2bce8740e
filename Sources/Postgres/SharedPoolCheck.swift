import Foundation

/// A check, for tests, that no blocking call runs on a thread of Swift's shared pool: with
/// `STORERECON_CHECK_DATABASE_THREADS` set (the test suite sets it for every binary it runs), a connection's blocking
/// call made there stops the process, naming the operation. The shared pool's threads are libdispatch's root-queue
/// workers, named after their QoS (`com.apple.root.default-qos`); ``DatabaseThreads`` runs on overcommitting ones
/// (`...-qos.overcommit`), a ``DatabaseThread`` and the main thread on threads of their own.
enum SharedPoolCheck {
    static let enabled = getenv("STORERECON_CHECK_DATABASE_THREADS") != nil

    static func verify(_ operation: String) {
        guard enabled else { return }
        // The thread's name, as `pthread_getname_np` (not in the Glibc module) reads it.
        let descriptor = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return }
        let thread = String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: .newlines)
        if thread.hasSuffix("-qos") {
            fatalError("postgres \(operation): a blocking call on a thread of Swift's shared pool (\(thread))")
        }
    }
}
