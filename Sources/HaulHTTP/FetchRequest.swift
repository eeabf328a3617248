import HaulCore

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

/// The most body bytes a response may bring.
public struct BodyLimit: Sendable, Equatable {
    /// The bound.
    public var bytes: Int64
    /// The bound is the storage's free space (going past it is `storage-full`, transient), not
    /// `--max-file-size` (`too-large`, final).
    public var isFreeSpace: Bool

    /// A limit.
    public init(bytes: Int64, isFreeSpace: Bool) {
        self.bytes = bytes
        self.isFreeSpace = isFreeSpace
    }

    /// The error for a body past the limit.
    var error: HaulError {
        isFreeSpace
            ? HaulError(
                .storageFull, "not enough free space: the origin's answer is larger than the \(ByteSize.format(bytes)) free on the storage",
                hint: "free space on the storage root", transient: true)
            : HaulError(
                .tooLarge, "the origin's answer is larger than the maximum file size of \(bytes) bytes",
                hint: "raise --max-file-size if the file is really wanted")
    }
}

/// One GET, possibly of a byte range.
public struct FetchRequest: Sendable {
    /// The URL (http or https; redirects are followed only to those, hop by hop: `following(_:hop:)`).
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
    /// Abort when the body comes slower than this (`--lowest-speed`); `nil`: only the stall timeout.
    public var lowestSpeed: LowestSpeed? = nil
    /// Refuse a body announced bigger than this, and abort one growing past it.
    public var bodyLimit: BodyLimit?
    /// Follow a redirect from https to http (the transfer has a checksum, or `--allow-downgrade`).
    public var allowDowngrade = false
    /// Which peer addresses may be connected to, checked on every connection (redirects too).
    public var addressPolicy: AddressPolicy = .open
    /// The pacer this request's bytes are received under (`--limit-rate`), shared with the
    /// process's other requests; `nil`: no limit. `HTTPClient.fetch` and `MultiClient.run`
    /// wait in it after each chunk.
    public var pacer: SharedRatePacer? = nil

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
