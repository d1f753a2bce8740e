import Crypto
import Foundation
import Synchronization

/// Certificate chains that passed validation, keyed by the leaf certificate's bytes (and, as a faster first look, by
/// the JWS header bytes that carried them). Only what is time-independent is cached: each payload's `signedDate` is
/// still checked against the chain's validity window.
final class ChainCache: Sendable {
    /// A validated chain: the leaf's key and the window in which all its certificates are valid.
    struct Entry: Sendable {
        var leafKey: P256.Signing.PublicKey
        var notBefore: Date
        var notAfter: Date

        /// - Throws: `certificateExpired` or `certificateNotYetValid` when `date` is outside the window.
        func checkValidity(at date: Date) throws {
            if date < notBefore {
                throw AppStoreServerAPIError(
                    code: .certificateNotYetValid,
                    message: "the certificate chain is valid only from \(notBefore), the payload was signed \(date)")
            }
            if date > notAfter {
                throw AppStoreServerAPIError(
                    code: .certificateExpired,
                    message: "the certificate chain expired \(notAfter), the payload was signed \(date)")
            }
        }
    }

    /// A header seen before and the chain it carried.
    private struct KnownHeader: Sendable {
        var bytes: [UInt8]
        var entry: Entry
    }

    private struct State {
        var byLeaf: [[UInt8]: Entry] = [:]
        var headers: [KnownHeader] = []
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: entries kept per map; the maps are emptied when full (leaves change rarely).
    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// The chain of a header seen before. Every payload asks, from many tasks at once, and a header with its `x5c`
    /// is kilobytes long: so the lock is held only to take the list, and headers are compared byte for byte (most
    /// differ in their first bytes, the leaf's serial number) rather than hashed.
    func entry(forHeader header: ArraySlice<UInt8>) -> Entry? {
        let headers = state.withLock { $0.headers }
        return header.withUnsafeBytes { wanted in
            headers.first { known in
                known.bytes.withUnsafeBytes { Self.same($0, wanted) }
            }?.entry
        }
    }

    private static func same(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        guard left.count == right.count else { return false }
        guard let leftBase = left.baseAddress, let rightBase = right.baseAddress else { return true }
        return memcmp(leftBase, rightBase, left.count) == 0
    }

    func entry(forLeaf leaf: [UInt8]) -> Entry? {
        state.withLock { $0.byLeaf[leaf] }
    }

    func store(_ entry: Entry, leaf: [UInt8], header: ArraySlice<UInt8>) {
        let known = KnownHeader(bytes: Array(header), entry: entry)
        state.withLock { state in
            if state.byLeaf.count >= capacity { state.byLeaf.removeAll() }
            if state.headers.count >= capacity { state.headers.removeAll() }
            state.byLeaf[leaf] = entry
            state.headers.append(known)
        }
    }

    var count: Int { state.withLock { $0.byLeaf.count } }
}
