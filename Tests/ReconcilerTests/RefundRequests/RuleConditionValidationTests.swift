import Foundation
import Reconciler
import Testing

/// A rule's condition that could never match, or would match everything, is refused when the configuration is read
/// (exit 78 naming the key), not applied without a word.
@Suite("Refund-request rule conditions, checked")
struct RuleConditionValidationTests {
    static func decode(_ json: String) throws -> RuleCondition {
        try JSONDecoder().decode(RuleCondition.self, from: Data(json.utf8))
    }

    @Test(arguments: [
        (#"{"countries": ["DEU"]}"#, "DEU: expected an ISO 3166-1 alpha-2 code"),
        (#"{"countries": ["D1"]}"#, "D1: expected an ISO 3166-1 alpha-2 code"),
        (#"{"priorRefundsAtLeast": -1}"#, "expected 0 or more"),
        (#"{"tenureDaysAtLeast": -30}"#, "expected 0 or more"),
        (#"{"consumedPercentAtLeast": 101}"#, "expected a percentage from 0 to 100"),
    ])
    func aConditionThatCannotMeanWhatItSaysIsRefused(_ json: String, _ message: String) {
        do {
            _ = try Self.decode(json)
            Issue.record("accepted \(json)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test func goodConditionsAreRead() throws {
        let condition = try Self.decode(#"{"countries": ["de", "FR"], "priorRefundsAtLeast": 0}"#)
        #expect(condition.countries == ["DE", "FR"])
        #expect(condition.priorRefundsAtLeast == 0)
    }
}
