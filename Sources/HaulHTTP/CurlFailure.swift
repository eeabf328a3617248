import CCurl
import HaulCore

/// Turns a libcurl result into a sentence a user can act on, for origins, upload targets and
/// object stores alike: the one place that says which network failures are worth retrying
/// (a refused connection, a reset, a stall) and which are not (a certificate that cannot be
/// verified, a malformed URL). No `CURLcode` numbers reach users.
public enum CurlFailure {
    /// Which peer the request went to, for the wording and for the settings a hint names.
    public enum Direction: Sendable {
        /// From an origin (`--ca-cert`, `--insecure`).
        case download
        /// To an upload target (`--upload-ca-cert`, `--upload-insecure`).
        case upload
        /// To an S3 endpoint (`AWS_ENDPOINT_URL`, `AWS_CA_BUNDLE`).
        case store
    }

    /// The error for `code` on a request to `url` after `bytes` body bytes; `detail` is
    /// libcurl's error buffer (empty: its generic text for the code), which may quote what the
    /// peer sent and is made safe to show (`SafeText.cleanLine`).
    public static func error(_ code: CURLcode, detail: String, url: String, bytes: Int64, direction: Direction = .download) -> HaulError {
        let host = OriginURL.hostKey(url)
        let shown = Redaction.url(url)
        let why = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : SafeText.cleanLine(detail)
        let peer: String
        let what: String
        switch direction {
        case .download: (peer, what) = ("origin \(host)", "download from \(host)")
        case .upload: (peer, what) = ("upload target \(host)", "upload to \(shown)")
        case .store: (peer, what) = ("the S3 endpoint \(host)", "request to the S3 endpoint \(host)")
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            let check = direction == .store ? "AWS_ENDPOINT_URL's host name" : "the URL's host name"
            return HaulError(.dns, "cannot resolve host \(host)", hint: "check \(check) and the resolver", transient: true)
        case CURLE_COULDNT_CONNECT:
            return HaulError(.connect, "cannot connect to \(host): \(why)", hint: "is \(peer) up and reachable from this machine?", transient: true)
        case CURLE_OPERATION_TIMEDOUT:
            return HaulError(.stalled, "\(peer) stalled after \(bytes) bytes: \(why)", transient: true)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            switch direction {
            case .download:
                return HaulError(
                    .tlsVerify, "the TLS certificate of \(host) could not be verified: \(why)",
                    hint: "for a private CA pass --ca-cert FILE (or set HAUL_CA_BUNDLE); use --insecure only if you accept the risk")
            case .upload:
                return HaulError(
                    .tlsVerify, "the TLS certificate of \(host) could not be verified: \(why)",
                    hint: "for a private CA pass --upload-ca-cert FILE; use --upload-insecure only if you accept the risk")
            case .store:
                return HaulError(
                    .tlsVerify, "the S3 store's TLS certificate is not trusted (\(host)): \(why)",
                    hint: "if the store's certificate is signed by a private CA, set AWS_CA_BUNDLE to that CA's PEM file; else check AWS_ENDPOINT_URL")
            }
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
                hint: "check the \(direction == .download ? "URL" : direction == .upload ? "upload target" : "S3 endpoint") with curl -sI", transient: true)
        case CURLE_WEIRD_SERVER_REPLY:
            return HaulError(.badOrigin, "\(peer) sent a malformed HTTP response: \(why)", transient: true)
        default:
            return HaulError(direction == .download ? .http : .network, "\(what) failed: \(why)", transient: true)
        }
    }
}
