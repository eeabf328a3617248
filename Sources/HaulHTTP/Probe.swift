import HaulCore

/// What the first ranged GET of a transfer says about the file. Pure.
public enum ProbeOutcome: Equatable, Sendable {
    /// `206` with a total: the file has `size` bytes and ranges work.
    case ranged(size: Int64)
    /// `200`: no range support; the body is the whole file, of `length` bytes when known.
    case whole(length: Int64?)
    /// `416` with `bytes */0` (or an empty `200`): a zero-byte file.
    case empty
    /// `304` to a conditional probe: the copy on storage is current.
    case notModified

    /// Classifies the response to `Range: bytes=0-<requestedLast>`.
    public static func classify(_ head: ResponseHead, requestedLast: Int64, url: String) throws -> ProbeOutcome {
        switch head.status {
        case 206:
            guard let range = head.contentRange, range.first == 0, let last = range.last else {
                let sent = SafeText.cleanLine(head["content-range"] ?? "")
                throw HaulError(
                    .badContentRange, "origin answered 206 with Content-Range '\(sent)' to a request for bytes 0-\(requestedLast)",
                    hint: "the origin's range support is broken", transient: true)
            }
            guard let total = range.total else {
                // Size unknown even though ranges work: treat as a single stream of this range only is wrong; read it whole.
                return .whole(length: nil)
            }
            guard last == min(requestedLast, total - 1) else {
                throw HaulError(
                    .badContentRange, "origin sent bytes 0-\(last) of \(total) when asked for 0-\(requestedLast)",
                    hint: "the origin's range support is broken", transient: true)
            }
            return .ranged(size: total)
        case 200:
            if head.contentLength == 0 { return .empty }
            return .whole(length: head.contentLength)
        case 304:
            return .notModified
        case 416:
            // No range that starts at byte 0 is unsatisfiable unless the file is empty (RFC 9110
            // §14.1.1), so a bare 416 means what `bytes */0` says; curl and aria2c agree.
            guard let total = head.contentRange?.total, total > 0 else { return .empty }
            throw HaulError(
                .originStatus, "origin answered 416 Range Not Satisfiable to bytes=0-\(requestedLast) for \(Redaction.url(head.url ?? url)) of \(total) bytes",
                hint: "the origin's range support is broken", transient: true)
        default:
            throw StatusPolicy.error(for: head, url: url)
        }
    }
}

/// The validators a plan pinned: every later ranged answer must carry the same ones.
public struct PinnedVersion: Equatable, Sendable {
    /// Total size in bytes, when known.
    public var size: Int64?
    /// The ETag, strong or weak, when the origin sent one.
    public var etag: String?
    /// `Last-Modified`, when the origin sent one.
    public var lastModified: String?

    /// Creates the pinned validators of a plan.
    public init(size: Int64?, etag: String?, lastModified: String?) {
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// Checks the answer to a later range request against what planning recorded. Pure.
public enum RangeCheck {
    /// Throws `origin-changed` when the response belongs to another version of the file (an
    /// ETag, `Last-Modified` or total size other than the pinned one, or a whole-file 200), and a
    /// transient `bad-content-range` when it is the same version but not the requested range
    /// (another range, or a missing or malformed `Content-Range`).
    public static func validate(_ head: ResponseHead, first: Int64, last: Int64?, pinned: PinnedVersion, url: String) throws {
        switch head.status {
        case 206:
            if let etag = pinned.etag, let now = head.etag, now != etag {
                throw changed("ETag \(etag) became \(now)")
            }
            if let modified = pinned.lastModified, let now = head["last-modified"], now != modified {
                throw changed("Last-Modified \(modified) became \(now)")
            }
            // Same validators: a missing or malformed range (one shifted past the file's end, say)
            // is a faulty answer of this version, never a new version.
            guard let range = head.contentRange else {
                throw HaulError(
                    .badContentRange,
                    "origin answered 206 with \(head["content-range"].map { "a malformed Content-Range '\(SafeText.cleanLine($0))'" } ?? "no Content-Range") when asked for bytes \(first)-\(last.map(String.init) ?? ""); the response was discarded",
                    hint: "the origin's range support is broken", transient: true)
            }
            if let expectedSize = pinned.size, range.total != expectedSize {
                throw changed("size was \(expectedSize) bytes, now \(range.total.map(String.init) ?? "unknown")")
            }
            guard range.first == first, last == nil || range.last == last else {
                throw HaulError(
                    .badContentRange,
                    "origin sent \(head["content-range"].map(SafeText.cleanLine) ?? "another range") when asked for bytes \(first)-\(last.map(String.init) ?? "") of the same version; the response was discarded",
                    hint: "the origin's range support is broken", transient: true)
            }
        case 200:
            let now = head.etag.map { " (ETag \(pinned.etag ?? "none") became \($0))" } ?? ""
            throw changed("answered 200 with the whole file to a range request\(now)")
        case 416:
            throw changed("answered 416: the file is now shorter than \(first + 1) bytes")
        default:
            throw StatusPolicy.error(for: head, url: url)
        }
    }

    private static func changed(_ detail: String) -> HaulError {
        HaulError(.originChanged, "origin changed while downloading: \(detail)")
    }
}
