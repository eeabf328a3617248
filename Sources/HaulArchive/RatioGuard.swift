import HaulCore

/// Refuses compressed content that expands more than `Limits.maxRatio` times its compressed size, when
/// a ratio limit is asked for (none by default): each zip entry (from the central directory, before
/// anything is written) and the gzip stream of a `.tar.gz` (as it is read, so a bomb stops after at
/// most `ratio` times what was read so far).
enum RatioGuard {
    /// Checks every zip entry's declared sizes; inflating past the declared size is refused by the decoder.
    static func check(_ catalog: ZipCatalog, _ limits: Limits) throws {
        guard let ratio = limits.maxRatio else { return }
        for entry in catalog.entries where entry.kind == .file && Int64(clamping: entry.size) > ExtractionLimits.ratioFloor {
            let compressed = max(Int64(clamping: entry.compressedSize), 1)
            if exceeds(Int64(clamping: entry.size), compressed, ratio) {
                throw refusal("entry '\(HaulError.printable(entry.path))'", size: Int64(clamping: entry.size), compressed: compressed, ratio: ratio)
            }
        }
    }

    /// The decompressed bytes of a gzip file, refused once they pass the ratio to the compressed bytes read.
    static func gzip(_ file: InputFile, _ limits: Limits) -> any ByteSource {
        gzip(FileSource(file), limits)
    }

    /// The decompressed bytes of gzip data read from `source`, refused as above.
    static func gzip(_ source: any ByteSource, _ limits: Limits) -> any ByteSource {
        guard let ratio = limits.maxRatio else { return GzipSource(source) }
        let counted = CountingSource(source)
        return LimitedSource(GzipSource(counted), counted: counted, ratio: ratio)
    }

    /// Whether `size` is more than `ratio` times `compressed`.
    static func exceeds(_ size: Int64, _ compressed: Int64, _ ratio: Int64) -> Bool {
        let (bound, overflow) = compressed.multipliedReportingOverflow(by: ratio)
        return !overflow && size > bound
    }

    static func refusal(_ what: String, size: Int64, compressed: Int64, ratio: Int64) -> HaulError {
        HaulError(
            HaulError.Code.compressionRatio,
            "refusing archive: \(what) expands \(size / compressed) times (\(ByteSize.format(compressed)) to at least \(ByteSize.format(size))), more than the limit of \(ratio)",
            hint: "nothing was kept; raise or leave out the ratio limit (--max-ratio, --extract-max-ratio) if the archive is trusted")
    }
}

/// Counts the bytes read from a source.
final class CountingSource: ByteSource {
    private let source: any ByteSource
    private(set) var count: Int64 = 0

    init(_ source: any ByteSource) { self.source = source }

    func read(into buffer: UnsafeMutableRawPointer, count wanted: Int) throws -> Int {
        let got = try source.read(into: buffer, count: wanted)
        count += Int64(got)
        return got
    }
}

/// Decompressed bytes that stop with `compression-ratio` when they outgrow the compressed bytes read.
final class LimitedSource: ByteSource {
    private let source: any ByteSource
    private let counted: CountingSource
    private let ratio: Int64
    private var produced: Int64 = 0

    init(_ source: any ByteSource, counted: CountingSource, ratio: Int64) {
        self.source = source
        self.counted = counted
        self.ratio = ratio
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let got = try source.read(into: buffer, count: count)
        produced += Int64(got)
        let compressed = max(counted.count, 1)
        if produced > ExtractionLimits.ratioFloor && RatioGuard.exceeds(produced, compressed, ratio) {
            throw RatioGuard.refusal("the gzip stream", size: produced, compressed: compressed, ratio: ratio)
        }
        return got
    }
}
