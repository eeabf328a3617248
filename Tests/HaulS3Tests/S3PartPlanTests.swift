import HaulS3
import Testing

/// The part plan of a file on S3 storage: a first part the probe fixed, then parts of one size.
@Suite("S3 part plans")
struct S3PartPlanTests {
    static let mib: Int64 = 1 << 20

    /// The parts a file is cut into: the first of `first` bytes, the others of `part`, the last shorter.
    static func count(size: Int64, first: Int64, part: Int64) -> Int64 {
        size <= first ? 1 : 1 + (size - first + part - 1) / part
    }

    /// Every S3 rule for the plan of `size` bytes with a first part of `first`, asked for `requested`.
    static func expectValid(size: Int64, first: Int64, requested: Int64, sourceLocation: SourceLocation = #_sourceLocation) {
        let part = S3PartRules.partSize(fileSize: size, first: first, requested: requested)
        let parts = count(size: size, first: first, part: part)
        #expect(parts <= 10_000, "\(size) bytes, first \(first): \(parts) parts of \(part)", sourceLocation: sourceLocation)
        #expect(part >= 5 * mib && part <= 5 << 30, "\(size) bytes: parts of \(part)", sourceLocation: sourceLocation)
        #expect(part % mib == 0, sourceLocation: sourceLocation)
    }

    @Test("a 90 000 MiB file after an 8 MiB first part is cut into 9 001 parts, not 10 001")
    func reported() {
        let size: Int64 = 90_000 * Self.mib
        let part = S3PartRules.partSize(fileSize: size, first: 8 * Self.mib, requested: 8 * Self.mib)
        #expect(part == 10 * Self.mib)
        #expect(Self.count(size: size, first: 8 * Self.mib, part: part) == 9_001)
    }

    @Test("edges: empty, below a part, at each part-size step, 5 TiB; first parts of 5 MiB to 5 GiB")
    func edges() {
        let firsts: [Int64] = [5 * Self.mib, 8 * Self.mib, 8 * Self.mib + 1, 64 * Self.mib, 5 << 30]
        var sizes: [Int64] = [0, 1, 5 * Self.mib - 1, 5 * Self.mib, 8 * Self.mib, 50_000 * Self.mib, 78 << 30, 5 << 40]
        for parts: Int64 in [9_999, 10_000, 10_001] {
            for each in [5 * Self.mib, 8 * Self.mib, 9 * Self.mib, 64 * Self.mib, 512 * Self.mib] {
                sizes += [parts * each - 1, parts * each, parts * each + 1]
            }
        }
        for first in firsts {
            for size in sizes where size <= 5 << 40 {
                for requested in [Self.mib, 8 * Self.mib, 128 * Self.mib, 6 << 30] {
                    Self.expectValid(size: size, first: first, requested: requested)
                }
            }
        }
    }

    @Test("a sweep from 1 MiB to 5 TiB, byte-odd sizes included, never plans more than 10 000 parts")
    func sweep() {
        var size: Int64 = Self.mib
        var step: Int64 = 1
        while size <= 5 << 40 {
            for first in [5 * Self.mib, 8 * Self.mib, 16 * Self.mib + 3] {
                Self.expectValid(size: size, first: first, requested: 8 * Self.mib)
            }
            // Geometric steps with odd offsets, so that sizes fall on and off every MiB boundary.
            step = step * 1_000_003 / 1_000_000 + 7_919
            size += step
        }
        // Every whole MiB from 50 000 MiB to 120 000 MiB, where the first part used to tip a plan over.
        for mibs in Int64(50_000)...120_000 {
            Self.expectValid(size: mibs * Self.mib, first: 8 * Self.mib, requested: 8 * Self.mib)
        }
    }

    @Test("a part size that keeps the uniform plan within 10 000 parts is not grown further")
    func notGrown() {
        #expect(S3PartRules.partSize(fileSize: 1 << 30, first: 8 * Self.mib, requested: 64 * Self.mib) == 64 * Self.mib)
        #expect(S3PartRules.partSize(fileSize: 100 * Self.mib, first: 8 * Self.mib, requested: Self.mib) == 5 * Self.mib)
        #expect(S3PartRules.partSize(fileSize: 5 << 40, first: 8 * Self.mib, requested: 8 << 30) == 5 << 30)
    }
}
