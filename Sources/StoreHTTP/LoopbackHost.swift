/// Which hosts count as loopback, where plain `http` is allowed (the store simulator). Everything else must be
/// `https`, so TLS certificate checks cannot be bypassed for a real host by writing `http`.
public enum LoopbackHost {
    /// Whether `host`, as `URL.host` gives it, is `localhost`, a dotted-quad IPv4 address in 127.0.0.0/8 or `::1`.
    /// Names that merely start like an address (`127.0.0.1.example.com`) are not loopback.
    public static func contains(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return false }
        for octet in octets {
            guard (1...3).contains(octet.count), octet.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(octet), value <= 255
            else { return false }
        }
        return octets[0] == "127"
    }
}
