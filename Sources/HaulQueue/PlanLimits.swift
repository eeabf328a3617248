import HaulCore

/// What a plan may be, whatever an origin announces: a file no bigger than the storage can take
/// (or `--max-file-size`), segments no smaller than 64 KiB and at most 10 000 of them. Pure, so
/// an origin announcing 2^63-1 bytes is a test case rather than a crashed fleet.
public struct PlanLimits: Sendable, Equatable {
    /// The smallest `--segment-size` accepted: smaller segments cost more in rows and requests than they save.
    public static let minimumSegmentSize: Int64 = 64 << 10
    /// The most segments one transfer is cut into; bigger files get bigger segments.
    public static let maximumSegments: Int64 = 10_000

    /// The largest file accepted (`--max-file-size` of the transfer or of the worker), if any.
    public var maxFileSize: Int64?
    /// Bytes free on the storage for this file, if known.
    public var freeSpace: Int64?
    /// Bytes the storage holds in all, if known: a file bigger than that can never fit.
    public var capacity: Int64?

    /// Limits; `nil` means no bound of that kind.
    public init(maxFileSize: Int64? = nil, freeSpace: Int64? = nil, capacity: Int64? = nil) {
        self.maxFileSize = maxFileSize
        self.freeSpace = freeSpace
        self.capacity = capacity
    }

    /// The most body bytes one response may bring (`CURLOPT_MAXFILESIZE_LARGE`, for bodies of
    /// unknown length), and whether going past it is transient: the free space (which may
    /// grow again) rather than `--max-file-size` is the smaller bound.
    public var bodyLimit: (bytes: Int64, transient: Bool)? {
        switch (maxFileSize, freeSpace) {
        case (let hard?, let free?): free < hard ? (free, true) : (hard, false)
        case (let hard?, nil): (hard, false)
        case (nil, let free?): (free, true)
        case (nil, nil): nil
        }
    }

    /// Throws when `size` bytes exceed a limit: `too-large` (not transient) past
    /// ``maxFileSize`` or the storage's ``capacity``, `storage-full` (transient: space may be
    /// freed) past its ``freeSpace``.
    public func check(size: Int64) throws(HaulError) {
        if let maxFileSize, size > maxFileSize {
            throw HaulError(
                .tooLarge, "the origin announced \(size) bytes, more than the maximum file size of \(maxFileSize) bytes",
                hint: "raise --max-file-size if the file is really wanted")
        }
        if let capacity, size > capacity {
            throw HaulError(
                .tooLarge, "the origin announced \(size) bytes, more than the whole storage holds (\(capacity) bytes)",
                hint: "store it on a bigger volume")
        }
        if let freeSpace, size > freeSpace {
            throw HaulError(
                .storageFull,
                "not enough free space: the origin announced \(ByteSize.format(size)) (\(size) bytes) and \(ByteSize.format(freeSpace)) are free on the storage",
                hint: "free \(ByteSize.format(size - freeSpace)) more on the storage root", transient: true)
        }
    }

    /// Refuses a `--segment-size` below ``minimumSegmentSize`` with a usage error.
    public static func validateSegmentSize(_ size: Int64, flag: String = "--segment-size") throws(HaulError) {
        guard size >= minimumSegmentSize else {
            throw HaulError.usage("\(flag) \(size) is below the minimum of 64KiB", hint: "give 64KiB or more, or leave it out for automatic sizes")
        }
    }

    /// The segment size after the first (fixed: it was the probe's own range) that keeps a file
    /// of `size` bytes within ``maximumSegments``: `rest`, or larger when needed.
    public static func segmentSize(fileSize size: Int64, first: Int64, rest: Int64) -> Int64 {
        let remaining = size - first
        guard remaining > 0 else { return rest }
        let others = maximumSegments - 1
        let needed = remaining / others + (remaining % others == 0 ? 0 : 1)
        return max(rest, needed)
    }
}
