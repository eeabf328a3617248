import CCurl
import HaulCore

/// Turns a libcurl result into a sentence a user can act on. No `CURLcode` numbers reach users.
enum CurlFailure {
    static func error(_ code: CURLcode, detail: String, url: String, bytes: Int64) -> HaulError {
        let host = OriginURL.hostKey(url)
        let shown = Redaction.url(url)
        let why = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return HaulError("dns", "cannot resolve host \(host)", hint: "check the URL's host name and the resolver", transient: true)
        case CURLE_COULDNT_CONNECT:
            return HaulError("connect", "cannot connect to \(host): \(why)", hint: "is the origin up and reachable from this worker?", transient: true)
        case CURLE_OPERATION_TIMEDOUT:
            return HaulError("stalled", "origin \(host) stalled after \(bytes) bytes: \(why)", transient: true)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return HaulError(
                "tls-verify", "the TLS certificate of \(host) could not be verified: \(why)",
                hint: "for a private CA pass --ca-cert FILE (or set HAUL_CA_BUNDLE); use --insecure only if you accept the risk")
        case CURLE_SSL_CONNECT_ERROR:
            return HaulError("tls", "TLS handshake with \(host) failed: \(why)", hint: "check that the origin speaks HTTPS on that port", transient: true)
        case CURLE_TOO_MANY_REDIRECTS:
            return HaulError("redirects", "too many redirects from \(shown)", hint: "the origin redirects in a loop or more than 10 times")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return HaulError("redirect-scheme", "\(shown) redirected to a URL that is not http or https", hint: "haul follows redirects only to http and https")
        case CURLE_PARTIAL_FILE:
            return HaulError("short-body", "origin \(host) closed the connection early after \(bytes) bytes", transient: true)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return HaulError("connection-reset", "connection to \(host) was reset after \(bytes) bytes: \(why)", transient: true)
        case CURLE_ABORTED_BY_CALLBACK:
            return HaulError("interrupted", "download from \(host) was interrupted", transient: true)
        default:
            return HaulError("http", "download from \(host) failed: \(why)", transient: true)
        }
    }
}
