import HaulCore

/// Where a tus upload may live: only on the creation endpoint's own origin.
///
/// A server's `Location` (or an upload URL recorded earlier, or given to resume) is a place
/// Haul will send the file's bytes and its credential headers; a hostile or confused server
/// must not be able to point it at another host, another port, or a `file:`/`gopher:` URL
/// that libcurl would otherwise happily write to.
public enum TusLocation {
    /// Resolves `location` against `endpoint` and checks it stays on the endpoint's origin.
    /// - Returns: the absolute upload URL.
    /// - Throws: `bad-server` naming both origins (redacted) when it does not.
    public static func resolve(_ location: String, endpoint: String) throws(HaulError) -> String {
        guard let absolute = Origin.resolve(location, against: endpoint) else {
            throw refused(location, endpoint, why: "is not a URL")
        }
        try check(absolute, endpoint: endpoint)
        return absolute
    }

    /// Checks that an absolute upload URL (stored, or given with `--resume`) is on the
    /// endpoint's origin; throws `bad-server` otherwise.
    public static func check(_ url: String, endpoint: String) throws(HaulError) {
        guard let expected = Origin(url: endpoint) else {
            throw refused(url, endpoint, why: "cannot be checked against an endpoint that is not an http(s) URL")
        }
        guard let origin = Origin(url: url) else { throw refused(url, endpoint, why: "is not an http or https URL") }
        guard origin == expected else { throw refused(url, endpoint, why: "is on \(origin), not on the endpoint's origin \(expected)") }
    }

    private static func refused(_ url: String, _ endpoint: String, why: String) -> HaulError {
        HaulError(
            .badServer, "the tus upload URL '\(SafeText.cleanLine(Redaction.url(url)))' \(why)",
            hint: "the tus server at \(Redaction.url(endpoint)) must answer with a Location on its own scheme, host and port")
    }
}
