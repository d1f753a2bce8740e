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

    private struct State {
        var byLeaf: [[UInt8]: Entry] = [:]
        var byHeader: [[UInt8]: Entry] = [:]
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: entries kept per map; the maps are emptied when full (leaves change rarely).
    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    func entry(forHeader header: ArraySlice<UInt8>) -> Entry? {
        let key = Array(header)
        return state.withLock { $0.byHeader[key] }
    }

    func entry(forLeaf leaf: [UInt8]) -> Entry? {
        state.withLock { $0.byLeaf[leaf] }
    }

    func store(_ entry: Entry, leaf: [UInt8], header: ArraySlice<UInt8>) {
        let headerKey = Array(header)
        state.withLock { state in
            if state.byLeaf.count >= capacity { state.byLeaf.removeAll() }
            if state.byHeader.count >= capacity { state.byHeader.removeAll() }
            state.byLeaf[leaf] = entry
            state.byHeader[headerKey] = entry
        }
    }

    var count: Int { state.withLock { $0.byLeaf.count } }
}
