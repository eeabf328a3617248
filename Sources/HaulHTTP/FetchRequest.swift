/// TLS settings for one origin.
public struct TLSOptions: Sendable, Equatable {
    /// A PEM bundle of CA certificates to trust instead of the system's.
    public var caBundle: String?
    /// Skip certificate and host name verification (only when the operator asked).
    public var insecure: Bool

    /// Verification on, system CAs.
    public init(caBundle: String? = nil, insecure: Bool = false) {
        self.caBundle = caBundle
        self.insecure = insecure
    }
}

/// One GET, possibly of a byte range.
public struct FetchRequest: Sendable {
    /// The URL (http or https; redirects are followed only to those).
    public var url: String
    /// Extra request headers as `Name: value` lines.
    public var headerLines: [String]
    /// First byte to ask for; `nil` sends no `Range`.
    public var first: Int64?
    /// Last byte (inclusive) to ask for; `nil` means to the end.
    public var last: Int64?
    /// Validator sent as `If-Range` so a changed file answers `200` instead of mixing versions.
    public var ifRange: String?
    /// TLS verification settings.
    public var tls: TLSOptions
    /// Abort when no byte arrives for this many seconds.
    public var stallTimeout: Int
    /// Most bytes per second this request receives on average (`RatePacer`); `nil`: no limit.
    /// Honoured by `HTTPClient.fetch`, not by `MultiClient`, whose transfers share one thread.
    public var maxBytesPerSecond: Int64? = nil

    /// A plain GET of `url`.
    public init(
        url: String, headerLines: [String] = [], first: Int64? = nil, last: Int64? = nil, ifRange: String? = nil, tls: TLSOptions = TLSOptions(),
        stallTimeout: Int = 30
    ) {
        self.url = url
        self.headerLines = headerLines
        self.first = first
        self.last = last
        self.ifRange = ifRange
        self.tls = tls
        self.stallTimeout = stallTimeout
    }

    /// The `Range` header value, e.g. `bytes=0-8388607`, when a range is asked for.
    public var rangeValue: String? {
        guard let first else { return nil }
        return "bytes=\(first)-\(last.map(String.init) ?? "")"
    }
}
