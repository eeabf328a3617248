import CCurl
import HaulCore

/// Turns a libcurl result into a sentence a user can act on, for downloads and uploads alike.
/// No `CURLcode` numbers reach users.
public enum CurlFailure {
    /// Which way the bytes went, for the wording and for the flags a hint names.
    public enum Direction: Sendable {
        /// From an origin (`--ca-cert`, `--insecure`).
        case download
        /// To an upload target (`--upload-ca-cert`, `--upload-insecure`).
        case upload
    }

    /// The error for `code` on a request to `url` after `bytes` body bytes; `detail` is
    /// libcurl's error buffer (empty: its generic text for the code), which may quote what the
    /// peer sent and is made safe to show (`SafeText.cleanLine`).
    public static func error(_ code: CURLcode, detail: String, url: String, bytes: Int64, direction: Direction = .download) -> HaulError {
        let host = OriginURL.hostKey(url)
        let shown = Redaction.url(url)
        let why = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : SafeText.cleanLine(detail)
        let peer = direction == .download ? "origin \(host)" : "upload target \(host)"
        let what = direction == .download ? "download from \(host)" : "upload to \(shown)"
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return HaulError(.dns, "cannot resolve host \(host)", hint: "check the URL's host name and the resolver", transient: true)
        case CURLE_COULDNT_CONNECT:
            return HaulError(.connect, "cannot connect to \(host): \(why)", hint: "is \(peer) up and reachable from this machine?", transient: true)
        case CURLE_OPERATION_TIMEDOUT:
            return HaulError(.stalled, "\(peer) stalled after \(bytes) bytes: \(why)", transient: true)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            let flags =
                direction == .download
                ? "for a private CA pass --ca-cert FILE (or set HAUL_CA_BUNDLE); use --insecure only if you accept the risk"
                : "for a private CA pass --upload-ca-cert FILE; use --upload-insecure only if you accept the risk"
            return HaulError(.tlsVerify, "the TLS certificate of \(host) could not be verified: \(why)", hint: flags)
        case CURLE_SSL_CONNECT_ERROR:
            return HaulError(.tls, "TLS handshake with \(host) failed: \(why)", hint: "check that \(peer) speaks HTTPS on that port", transient: true)
        case CURLE_TOO_MANY_REDIRECTS:
            return HaulError(.redirects, "too many redirects from \(shown)", hint: "the origin redirects in a loop or more than 10 times")
        case CURLE_URL_MALFORMAT:
            return HaulError(.badURL, "\(what) failed: \(why)", hint: "give an http:// or https:// URL")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return direction == .download
                ? HaulError(.redirectScheme, "\(shown) redirected to a URL that is not http or https", hint: "haul follows redirects only to http and https")
                : HaulError(.badURL, "\(what) failed: \(why)", hint: "give an http:// or https:// URL")
        case CURLE_PARTIAL_FILE:
            return HaulError(.shortBody, "\(peer) closed the connection early after \(bytes) bytes", transient: true)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return HaulError(.connectionReset, "connection to \(host) was reset after \(bytes) bytes: \(why)", transient: true)
        case CURLE_ABORTED_BY_CALLBACK:
            return HaulError(.interrupted, "\(what) was interrupted", transient: true)
        case CURLE_OUT_OF_MEMORY where bytes == 0:
            // libcurl's own limit on one response header line (100 KiB) ends a response so.
            return HaulError(
                .badOrigin, "\(peer) sent a response header line longer than libcurl accepts (100 KiB), or this machine ran out of memory",
                hint: "check the \(direction == .download ? "URL" : "upload target") with curl -sI", transient: true)
        case CURLE_WEIRD_SERVER_REPLY:
            return HaulError(.badOrigin, "\(peer) sent a malformed HTTP response: \(why)", transient: true)
        default:
            return HaulError(direction == .download ? .http : .network, "\(what) failed: \(why)", transient: true)
        }
    }
}
