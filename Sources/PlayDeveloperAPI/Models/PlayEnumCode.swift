// Shared decoding for Google's small integer codes (`voidedSource`, `voidedReason`): a number, a decimal string,
// or a label string; an unknown number is kept raw and labelled "unknown".
protocol PlayEnumCode {
    /// Labels by code, index = code.
    static var labels: [String] { get }
    var code: Int32? { get }
    var label: String { get }
    init(code: Int32?, label: String)
}

extension PlayEnumCode {
    static func label(for code: Int32) -> String {
        code >= 0 && Int(code) < labels.count ? labels[Int(code)] : "unknown"
    }

    var codeDescription: String {
        if let code { return "\(code) (\(label))" }
        return label
    }

    init(decoding decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // A failed attempt costs a thrown DecodingError (several times the cost of a row), so try first the spelling
        // the page uses (see `CodingUserInfoKey.playCodesAreStrings`).
        let stringsFirst = decoder.userInfo[.playCodesAreStrings] as? Bool ?? false
        if !stringsFirst, let number = try? container.decode(Int32.self) {
            self.init(code: number, label: Self.label(for: number))
            return
        }
        let text: String
        if stringsFirst {
            guard let decoded = try? container.decode(String.self) else {
                let number = try container.decode(Int32.self)
                self.init(code: number, label: Self.label(for: number))
                return
            }
            text = decoded
        } else {
            text = try container.decode(String.self)
        }
        self.init(text: text)
    }

    /// The value a string names: a decimal code or a label.
    init(text: String) {
        if let number = Int32(text) {
            self.init(code: number, label: Self.label(for: number))
        } else if let index = Self.labels.firstIndex(where: { $0.caseInsensitiveCompare(text) == .orderedSame }) {
            self.init(code: Int32(index), label: Self.labels[index])
        } else {
            // An undocumented spelling: keep going (the row's raw JSON keeps what was sent).
            self.init(code: nil, label: "unknown")
        }
    }

    func encodeCode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let code {
            try container.encode(code)
        } else {
            try container.encode(label)
        }
    }
}

extension CodingUserInfoKey {
    /// `true` when the page sends `voidedSource`/`voidedReason` as strings: a decoding hint, never a requirement.
    static let playCodesAreStrings = CodingUserInfoKey(rawValue: "play.codesAreStrings")!
}
