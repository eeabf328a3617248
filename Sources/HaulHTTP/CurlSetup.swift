import CCurl
import HaulCore

/// The options every libcurl handle of Haul's gets, downloads, uploads and object-store
/// requests alike, so that a rule (only http and https, never a signal, the TLS choice) is
/// set in one place and cannot drift between them.
public enum CurlSetup {
    /// Sets `url` and the common options on `handle`: no signals, no protocol but http and
    /// https (redirects included; callers follow redirects themselves, or not at all), a
    /// 30 s connect timeout, an abort after `stallSeconds` without a byte (or, with a
    /// `lowest` speed, under that speed for its time or `stallSeconds`, the shorter), and `tls`.
    /// `errorBuffer` (`CURL_ERROR_SIZE` bytes) receives libcurl's detail on a failure.
    public static func common(
        _ handle: UnsafeMutableRawPointer, url: String, tls: TLSOptions, stallSeconds: Int, lowest: LowestSpeed? = nil,
        errorBuffer: UnsafeMutablePointer<CChar>
    ) {
        haul_easy_setopt_string(handle, CURLOPT_URL, url)
        haul_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        haul_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        haul_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        haul_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        haul_easy_setopt_string(handle, CURLOPT_USERAGENT, Curl.userAgent)
        haul_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 30)
        haul_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, lowest.map { Int($0.bytesPerSecond) } ?? 1)
        haul_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, lowest.map { min($0.seconds, stallSeconds) } ?? stallSeconds)
        haul_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        if let bundle = tls.caBundle { haul_easy_setopt_string(handle, CURLOPT_CAINFO, bundle) }
        if tls.insecure {
            haul_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 0)
            haul_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0)
        }
    }
}
