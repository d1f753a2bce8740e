import Foundation
import Testing

@testable import Reconciler

/// ``OpenRequestsInHand`` without I/O: groups in the order read, each request once per run even when read again,
/// and subjects loaded a chunk ahead, once each.
@Suite("OpenRequestsInHand")
struct OpenRequestsInHandTests {
    func open(_ id: Int64) -> OpenRefundRequest {
        let received = Date(timeIntervalSince1970: 1_795_000_000 + Double(id))
        let request = NewRefundRequest(
            store: .apple, requestId: "u\(id)", transactionId: "\(id)", originalId: nil, productId: nil,
            productType: nil, country: nil, familyShared: false, reason: nil, pendingToken: nil, receivedAt: received,
            purchasedAt: nil, firstPurchasedAt: nil, expiresAt: nil, priceNanos: nil, currency: nil)
        return OpenRefundRequest(id: id, request: request, deadline: request.deadline)
    }

    @Test func eachRequestIsTakenOnceAndSubjectsAreLoadedAheadOnce() {
        var hand = OpenRequestsInHand<String>()
        var loads: [[Int64]] = []
        func load(_ chunk: [OpenRefundRequest]) -> [String] {
            loads.append(chunk.map(\.id))
            return chunk.map { "subject \($0.id)" }
        }
        hand.replace(with: (1...5).map(open))
        let first = hand.next(2, ahead: 4, load: load)
        #expect(first.map(\.0.id) == [1, 2] && first.map(\.1) == ["subject 1", "subject 2"])
        #expect(loads == [[1, 2, 3, 4]])
        // Read again with a new request (6) and the two taken, still open (left `no_facts`).
        hand.replace(with: [1, 2, 3, 4, 5, 6].map(open))
        #expect(hand.count == 4)
        let second = hand.next(2, ahead: 4, load: load)
        #expect(second.map(\.0.id) == [3, 4] && second.map(\.1) == ["subject 3", "subject 4"])
        #expect(loads == [[1, 2, 3, 4]], "3 and 4 were loaded with the first chunk")
        let third = hand.next(3, ahead: 2, load: load)
        #expect(third.map(\.0.id) == [5, 6])
        #expect(loads == [[1, 2, 3, 4], [5, 6]])
        #expect(hand.isEmpty && hand.taken == [1, 2, 3, 4, 5, 6])
        hand.replace(with: (1...6).map(open))
        #expect(hand.isEmpty)
    }
}
