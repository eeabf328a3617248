import CCurl
import Foundation

/// Process-wide libcurl set-up.
public enum Curl {
    /// Initialises libcurl and ignores `SIGPIPE`. Call once from `main`, before any thread starts.
    public static func initialize() {
        signal(SIGPIPE, SIG_IGN)
        curl_global_init(haul_global_all())
    }

    /// The `User-Agent` Haul sends.
    public static let userAgent = "haul/0.1 (+libcurl)"
}
