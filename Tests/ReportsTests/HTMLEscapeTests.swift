import Testing

@testable import Reports

/// HTML escaping works on Unicode scalars: a quote or bracket followed by a combining mark (one Character) is still
/// escaped, so a store's field cannot leave an attribute of the refund or tie-out report.
@Suite("HTML escaping")
struct HTMLEscapeTests {
    @Test func aQuoteOrBracketFollowedByACombiningMarkIsEscaped() {
        let hostile = "\"\u{301} onload=\"x\" <\u{301}svg> & '"
        let expected = "&quot;\u{301} onload=&quot;x&quot; &lt;\u{301}svg&gt; &amp; &#39;"
        #expect(RefundReport.escape(hostile) == expected)
        #expect(TieOutReport.escape(hostile).unicodeScalars.contains("\"") == false)
    }
}
