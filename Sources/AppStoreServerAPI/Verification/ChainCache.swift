import Crypto
import Foundation
import Synchronization
import X509

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

    /// What a verification that found no cached chain for its leaf does.
    private enum Turn {
        /// Validates the chain; the verifications that ask meanwhile wait for it.
        case lead
        /// Another verification validated the chain meanwhile.
        case validated(Entry)
        /// Validates the chain itself: the one it waited for failed.
        case alone
    }

    private struct State {
        var byLeaf: [[UInt8]: Entry] = [:]
        var headers: [KnownHeader] = []
        /// Leaves being validated, with the verifications waiting for the outcome.
        var validating: [[UInt8]: [CheckedContinuation<Turn, Never>]] = [:]
        /// Chain validations begun.
        var validations = 0
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

    /// The chain of `leaf`, cached or validated with `validate`, and remembered for `header`. Verifications of one
    /// leaf that arrive together (the first pages of many apps at a run's start) validate it once: the first
    /// validates, the others wait for it, and validate themselves only when it failed.
    func entry(
        forLeaf leaf: [UInt8], header: ArraySlice<UInt8>, validate: () async throws -> Entry
    ) async throws -> Entry {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            state.withLock { state in
                if let entry = state.byLeaf[leaf] {
                    continuation.resume(returning: .validated(entry))
                } else if state.validating[leaf] != nil {
                    state.validating[leaf]?.append(continuation)
                } else {
                    state.validating[leaf] = []
                    state.validations += 1
                    continuation.resume(returning: .lead)
                }
            }
        }
        switch turn {
        case .validated(let entry):
            store(entry, leaf: leaf, header: header)
            return entry
        case .alone:
            state.withLock { $0.validations += 1 }
            let entry = try await validate()
            store(entry, leaf: leaf, header: header)
            return entry
        case .lead:
            do {
                let entry = try await validate()
                store(entry, leaf: leaf, header: header)
                for waiting in state.withLock({ $0.validating.removeValue(forKey: leaf) ?? [] }) {
                    waiting.resume(returning: .validated(entry))
                }
                return entry
            } catch {
                for waiting in state.withLock({ $0.validating.removeValue(forKey: leaf) ?? [] }) {
                    waiting.resume(returning: .alone)
                }
                throw error
            }
        }
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

    /// How many chain validations began (for tests).
    var validationCount: Int { state.withLock { $0.validations } }
}

extension ChainCache {
    /// The caches shared by verifiers that trust the same roots, by that set of roots.
    private static let byRoots = Mutex<[Set<Certificate>: ChainCache]>([:])

    /// The one cache of the process for verifiers trusting exactly `roots`: a chain validated for one of them is valid
    /// for all (the checks depend on the roots alone), so each chain is validated once per process, not once per app.
    static func shared(trusting roots: [Certificate]) -> ChainCache {
        byRoots.withLock { caches in
            if let cache = caches[Set(roots)] { return cache }
            let cache = ChainCache()
            caches[Set(roots)] = cache
            return cache
        }
    }
}
