/// The fields of a JWS header that verification reads.
struct JWSHeader: Decodable {
    var alg: String?
    var x5c: [String]?
}
