import HaulCore

/// A resumable upload of one file to a tus 1.0.0 server (core protocol + creation extension).
public struct TusRequest: Sendable {
    /// The server's creation endpoint, such as `https://host/files/`.
    public var url: String
    /// Path of the file to upload.
    public var file: String
    /// Bytes per `PATCH`; each chunk is streamed from disk, never held in memory.
    public var chunkSize: Int64
    /// The name sent as `filename` metadata instead of the file's own.
    public var filename: String?
    /// The type sent as `filetype` metadata instead of the `/etc/mime.types` lookup.
    public var contentType: String?
    /// Extra `Upload-Metadata` pairs (`--field NAME=VALUE`), sent after `filename` and `filetype`;
    /// a field named `filename` or `filetype` replaces that default.
    public var fields: [(name: String, value: String)]
    /// Extra request headers as `Name: value` lines, sent on every request (redacted in errors).
    public var headers: [String]
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caBundle: String?
    /// Skips TLS certificate and host name checks.
    public var insecure: Bool

    /// 8 MiB: big enough that per-request overhead is small, small enough to lose little on a drop.
    public static let defaultChunkSize: Int64 = 8 << 20

    /// A request; only `url` and `file` are required.
    public init(
        url: String, file: String, chunkSize: Int64 = TusRequest.defaultChunkSize, filename: String? = nil,
        contentType: String? = nil, fields: [(name: String, value: String)] = [], headers: [String] = [], caBundle: String? = nil,
        insecure: Bool = false
    ) {
        self.fields = fields
        self.url = url
        self.file = file
        self.chunkSize = chunkSize
        self.filename = filename
        self.contentType = contentType
        self.headers = headers
        self.caBundle = caBundle
        self.insecure = insecure
    }

    /// Checks what can be checked before any network traffic; throws a `usage` error.
    func validate() throws {
        if chunkSize < 1 { throw HaulError.usage("chunk size must be at least 1 byte") }
        try MultipartRequest.validateHeaders(headers, contentType: contentType)
        var seen = Set<String>()
        for (name, _) in fields {
            // tus 1.0.0: a metadata key is non-empty ASCII without spaces or commas, and unique.
            guard name.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0 != "," && $0.value != 127 }) else {
                throw HaulError.usage("tus metadata key '\(name)' must be ASCII without spaces or commas", hint: "rename the --field")
            }
            guard seen.insert(name).inserted else { throw HaulError.usage("--field '\(name)' is given twice; tus metadata keys are unique") }
        }
    }
}
