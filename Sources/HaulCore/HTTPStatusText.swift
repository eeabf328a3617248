/// A status as messages show it: `404 Not Found`.
public enum HTTPStatusText {
    /// `status` with `reason`, the phrase the server sent. HTTP/2 and HTTP/3 carry no phrase:
    /// then the standard one is shown for the common codes, so a message reads alike over every
    /// version, and the bare number for the others.
    public static func of(_ status: Int, reason: String) -> String {
        let phrase = reason.isEmpty ? standardReasons[status] : reason
        return phrase.map { "\(status) \($0)" } ?? "\(status)"
    }

    /// RFC 9110's reason phrases for the codes a download or an upload is commonly answered with.
    static let standardReasons: [Int: String] = [
        200: "OK", 201: "Created", 204: "No Content", 206: "Partial Content", 301: "Moved Permanently", 302: "Found",
        303: "See Other", 304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request",
        401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 407: "Proxy Authentication Required",
        408: "Request Timeout", 409: "Conflict", 410: "Gone", 412: "Precondition Failed", 413: "Content Too Large",
        415: "Unsupported Media Type", 416: "Range Not Satisfiable", 429: "Too Many Requests", 500: "Internal Server Error",
        501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]
}
