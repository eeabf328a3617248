import HaulCore

/// One `multipart/form-data` POST: the files, streamed from disk, and text fields.
public struct MultipartRequest: Sendable {
    /// Where to POST, `http://` or `https://`; userinfo in it is sent but never printed.
    public var url: String
    /// Paths of the files to send, each as its own part under ``fileField``.
    public var files: [String]
    /// Text fields as (name, value), sent in order before the files; UTF-8 is kept as is.
    public var fields: [(name: String, value: String)]
    /// Form field name of the file parts; `file` unless told otherwise.
    public var fileField: String
    /// The file name to announce instead of the file's own; only with a single file.
    public var filename: String?
    /// The media type of every file part instead of the `/etc/mime.types` lookup.
    public var contentType: String?
    /// Extra request headers as `Name: value` lines (credentials are fine: they are redacted).
    public var headers: [String]
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caBundle: String?
    /// Skips TLS certificate and host name checks.
    public var insecure: Bool

    /// A request; only `url` and `files` are required.
    public init(
        url: String, files: [String], fields: [(name: String, value: String)] = [], fileField: String = "file",
        filename: String? = nil, contentType: String? = nil, headers: [String] = [], caBundle: String? = nil, insecure: Bool = false
    ) {
        self.url = url
        self.files = files
        self.fields = fields
        self.fileField = fileField
        self.filename = filename
        self.contentType = contentType
        self.headers = headers
        self.caBundle = caBundle
        self.insecure = insecure
    }

    /// Checks what can be checked before any network traffic; throws a `usage` error.
    func validate() throws {
        if files.isEmpty { throw HaulError.usage("no file to upload", hint: "name at least one file") }
        if filename != nil, files.count > 1 {
            throw HaulError.usage("--filename names one file but \(files.count) are uploaded", hint: "drop --filename or upload one file")
        }
        try Self.validateHeaders(headers, contentType: contentType)
    }

    /// Rejects header lines that are not `Name: value` and any line break that would smuggle in
    /// another header.
    static func validateHeaders(_ headers: [String], contentType: String?) throws {
        for line in headers + [contentType.map { "Content-Type: \($0)" } ?? ""] where !line.isEmpty {
            if !line.contains(":") || line.hasPrefix(":") || line.contains(where: \.isNewline) {
                throw HaulError.usage("header '\(Redaction.headerLine(line))' is not one 'Name: value' line")
            }
        }
    }
}

extension MultipartRequest {
    /// Parses a `NAME=VALUE` command-line field; the value may contain `=` and be empty.
    public static func parseField(_ text: String) throws -> (name: String, value: String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw HaulError.usage("field '\(text)' is not NAME=VALUE")
        }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}
