import CCrypto

/// An expected digest as operators write it: `sha256:9f86d0…`.
public struct Checksum: Sendable, Equatable, CustomStringConvertible {
    /// The digest algorithms Haul verifies, with their digest lengths in bytes.
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha256, sha512, sha1, md5

        /// Length of the digest in bytes.
        public var byteCount: Int {
            switch self {
            case .sha256: return 32
            case .sha512: return 64
            case .sha1: return 20
            case .md5: return 16
            }
        }
    }

    /// Which algorithm.
    public let algorithm: Algorithm
    /// The digest in lowercase hex.
    public let hex: String

    /// Parses `algo:hex`, refusing unknown algorithms and digests of the wrong length or not hex.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        let known = Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
        guard parts.count == 2 else {
            throw HaulError.usage("checksum '\(text)' is not ALGO:HEX", hint: "write it as sha256:<64 hex digits>; known algorithms: \(known)")
        }
        guard let algorithm = Algorithm(rawValue: parts[0].lowercased()) else {
            throw HaulError.usage("checksum algorithm '\(parts[0])' is not supported", hint: "use one of \(known)")
        }
        let hex = parts[1].lowercased()
        guard hex.count == algorithm.byteCount * 2, hex.allSatisfy(\.isHexDigit) else {
            throw HaulError.usage(
                "a \(algorithm.rawValue) checksum is \(algorithm.byteCount * 2) hex digits, but '\(parts[1])' is not",
                hint: "copy the digest exactly as published")
        }
        self.algorithm = algorithm
        self.hex = hex
    }

    /// Creates a checksum from parts already known to be valid.
    public init(algorithm: Algorithm, hex: String) {
        self.algorithm = algorithm
        self.hex = hex.lowercased()
    }

    /// `algo:hex`.
    public var description: String { "\(algorithm.rawValue):\(hex)" }

    /// The digest's bytes.
    public var bytes: [UInt8] { Self.bytes(ofHex: hex) ?? [] }

    /// The bytes `hex` spells, two hex digits (either case) a byte, or `nil` if it is not hex.
    public static func bytes(ofHex hex: some StringProtocol) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(ofHexDigit: digits[index]), let low = value(ofHexDigit: digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(ofHexDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// An incremental digest computed with OpenSSL's libcrypto. Owned by one thread.
public final class Digester {
    private let context: OpaquePointer
    /// The algorithm being computed.
    public let algorithm: Checksum.Algorithm

    /// Starts a digest.
    public init(_ algorithm: Checksum.Algorithm) {
        self.algorithm = algorithm
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, FetchedDigest.implementation(of: algorithm), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Finishes and returns the digest; the digester must not be used afterwards.
    public func finish() -> Checksum {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return Checksum(algorithm: algorithm, hex: ASCIIBytes.hex(output.prefix(Int(length))))
    }
}

/// OpenSSL's implementations of the algorithms, fetched from its providers once for the process.
/// A digest started from `EVP_sha256()` and its kind fetches the implementation again at every
/// start (OpenSSL 3), behind a lock all threads share: more work than hashing a URL, and a batch
/// of small files starts two digests a file (its bytes, and the URL's `SourceMark`).
private enum FetchedDigest {
    // A fetched EVP_MD is immutable, and OpenSSL lets any number of threads start digests with
    // it at once.
    nonisolated(unsafe) private static let sha256 = EVP_MD_fetch(nil, "SHA256", nil)
    nonisolated(unsafe) private static let sha512 = EVP_MD_fetch(nil, "SHA512", nil)
    nonisolated(unsafe) private static let sha1 = EVP_MD_fetch(nil, "SHA1", nil)
    nonisolated(unsafe) private static let md5 = EVP_MD_fetch(nil, "MD5", nil)

    /// The fetched implementation, or the legacy one where the fetch found none (then each
    /// start fetches, and fails as it always did if no provider has it).
    static func implementation(of algorithm: Checksum.Algorithm) -> OpaquePointer? {
        switch algorithm {
        case .sha256: return sha256 ?? EVP_sha256()
        case .sha512: return sha512 ?? EVP_sha512()
        case .sha1: return sha1 ?? EVP_sha1()
        case .md5: return md5 ?? EVP_md5()
        }
    }
}
