import CCurl
import Foundation

/// How a ``CurlTransfer`` becomes a libcurl easy handle, and how the handle's end becomes an answer.
enum CurlRequestSetup {
    /// Sets the handle up for the transfer; an error when libcurl refuses an option (the request cannot be sent).
    static func configure(_ handle: UnsafeMutableRawPointer, for transfer: CurlTransfer) -> TransportError? {
        let request = transfer.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var codes = [
            storerecon_curl_easy_setopt_pointer(handle, CURLOPT_URL, request.url.absoluteString),
            storerecon_curl_easy_setopt_pointer(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            storerecon_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            storerecon_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            storerecon_curl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1),
            storerecon_curl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
            storerecon_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds(request.timeout)),
            // Every encoding libcurl can decode is offered, and the body handed over decoded.
            storerecon_curl_easy_setopt_pointer(handle, CURLOPT_ACCEPT_ENCODING, ""),
            storerecon_curl_easy_setopt_pointer(handle, CURLOPT_USERAGENT, "storerecon"),
            storerecon_curl_easy_setopt_callback(handle, CURLOPT_WRITEFUNCTION, receiveBody),
            storerecon_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
            storerecon_curl_easy_setopt_callback(handle, CURLOPT_HEADERFUNCTION, receiveHeader),
            storerecon_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context),
        ]
        codes += method(handle, request)
        transfer.headerList = headerList(request.headers)
        codes.append(storerecon_curl_easy_setopt_pointer(handle, CURLOPT_HTTPHEADER, transfer.headerList))
        guard let refused = codes.first(where: { $0 != CURLE_OK }) else { return nil }
        return TransportError(
            code: .configuration, request: transfer.label, message: "libcurl refused an option: \(describe(refused))")
    }

    /// The method, and the body (copied by libcurl) when there is one.
    private static func method(_ handle: UnsafeMutableRawPointer, _ request: HTTPRequest) -> [CURLcode] {
        let method = request.method.uppercased()
        var codes: [CURLcode] = []
        if let body = request.body ?? (method == "POST" ? Data() : nil) {
            codes.append(
                storerecon_curl_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            codes.append(
                body.withUnsafeBytes { bytes in
                    guard let base = bytes.baseAddress else {
                        // An empty body still needs a valid pointer.
                        return storerecon_curl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, "")
                    }
                    return storerecon_curl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, base)
                })
            if method != "POST" {
                codes.append(storerecon_curl_easy_setopt_pointer(handle, CURLOPT_CUSTOMREQUEST, method))
            }
        } else if method == "GET" {
            codes.append(storerecon_curl_easy_setopt_long(handle, CURLOPT_HTTPGET, 1))
        } else if method == "HEAD" {
            codes.append(storerecon_curl_easy_setopt_long(handle, CURLOPT_NOBODY, 1))
        } else {
            codes.append(storerecon_curl_easy_setopt_pointer(handle, CURLOPT_CUSTOMREQUEST, method))
        }
        return codes
    }

    /// The request's fields, and an empty `Expect` so a body is sent at once, without waiting for `100 Continue`.
    private static func headerList(_ headers: [String: String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Expect:")
        for (name, value) in headers {
            // "Name;" is libcurl's way to send a field with an empty value.
            list = curl_slist_append(list, value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        return list
    }

    /// The answer, or the transport error that ended the transfer.
    static func outcome(
        _ code: CURLcode, handle: UnsafeMutableRawPointer, of transfer: CurlTransfer
    ) -> Result<HTTPResponse, any Error> {
        // The label (the URL's path, parsed again) only for an error: most answers need none.
        if transfer.tooLarge {
            return .failure(
                TransportError(
                    code: .tooLarge, request: transfer.label,
                    message: "body of more than \(transfer.limit) bytes refused"))
        }
        guard code == CURLE_OK else {
            var failure = TransportError(code: errorCode(code), request: transfer.label, message: describe(code))
            var sentAfter: curl_off_t = 0
            if code == CURLE_OPERATION_TIMEDOUT,
                storerecon_curl_easy_getinfo_off_t(handle, CURLINFO_PRETRANSFER_TIME_T, &sentAfter) == CURLE_OK,
                sentAfter == 0
            {
                // Out of time before the request went out (a name, a connection or a TLS handshake that never came):
                // no answer was awaited, the store never had the request.
                failure.code = .connection
                failure.message += ", before the request was sent"
            }
            return .failure(failure)
        }
        var status = 0
        storerecon_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        guard status >= 100 else {
            return .failure(TransportError(code: .invalidResponse, request: transfer.label, message: "no HTTP status"))
        }
        return .success(
            HTTPResponse(
                status: status, headers: transfer.headers, body: transfer.body, answeredAt: transfer.answeredAt))
    }

    private static func errorCode(_ code: CURLcode) -> TransportError.Code {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        // UNSUPPORTED_PROTOCOL is also a garbled answer ("HTTP/0.9 when not allowed"): a passing fault. The
        // configuration allows only http(s) store URLs.
        case CURLE_WEIRD_SERVER_REPLY, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP2,
            CURLE_HTTP2_STREAM:
            return .invalidResponse
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_URL_MALFORMAT:
            return .configuration
        default: return .connection
        }
    }

    /// libcurl's own words for the code, with the code; never the URL (its query may hold tokens).
    private static func describe(_ code: CURLcode) -> String {
        let name: String
        switch code {
        case CURLE_COULDNT_CONNECT: name = "connection refused"
        case CURLE_OPERATION_TIMEDOUT: name = "timed out"
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE:
            name = "the store's TLS certificate is not trusted here (a TLS-intercepting proxy, or no CA bundle)"
        case CURLE_SSL_CONNECT_ERROR:
            name = "TLS handshake failed"
        default: name = curl_easy_strerror(code).map { String(cString: $0) } ?? "transport error"
        }
        return "\(code.rawValue) (\(name))"
    }

    /// libcurl's `CURLOPT_TIMEOUT_MS` for a request's timeout. libcurl reads 0 as "no timeout": a timeout that is not
    /// a positive number (0, negative, NaN) takes ``HTTPRequest``'s default instead of letting a cron job hang.
    static func milliseconds(_ seconds: Double) -> Int {
        guard seconds.isFinite, seconds > 0 else { return Int(HTTPRequest.defaultTimeout * 1000) }
        return max(1, Int(min(seconds, 86_400) * 1000))
    }
}

private func receiveBody(
    _ bytes: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
)
    -> Int
{
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let bytes else { return length }
    return transfer.receive(UnsafeRawBufferPointer(start: bytes, count: length)) ? length : 0
}

private func receiveHeader(
    _ bytes: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let bytes else { return length }
    transfer.receiveHeader(UnsafeRawBufferPointer(start: bytes, count: length))
    return length
}
