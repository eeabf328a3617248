import HaulCore
import Synchronization

/// The optional S3 features a `PutObject` uses, and which of them a store turned out not to
/// implement (it answered `501 NotImplemented`): each is then left out of every later request
/// to that store, and the first refusal is logged once. Shared by every copy of one `S3Client`.
public final class S3Support: Sendable {
    /// A feature a store may lack.
    public enum Feature: Int, Sendable, CustomStringConvertible {
        /// `If-None-Match: *` / `If-Match: ETAG` on `PutObject` (conditional writes).
        case conditionalWrites
        /// `x-amz-checksum-sha256` on `PutObject` (the store checks the body's digest).
        case checksums

        public var description: String {
            switch self {
            case .conditionalWrites: "conditional writes (If-None-Match, If-Match)"
            case .checksums: "checksums (x-amz-checksum-sha256)"
            }
        }
    }

    private let missing = Atomic<Int>(0)

    /// A store assumed to support everything until it says otherwise.
    public init() {}

    /// Whether `feature` may be sent.
    public func supports(_ feature: Feature) -> Bool {
        missing.load(ordering: .relaxed) & (1 << feature.rawValue) == 0
    }

    /// Records that the store lacks `feature`. - Returns: whether this is the first time.
    @discardableResult
    public func drop(_ feature: Feature) -> Bool {
        missing.bitwiseOr(1 << feature.rawValue, ordering: .relaxed).oldValue & (1 << feature.rawValue) == 0
    }

    /// The feature an answer of `status` with S3 error `code` refuses, if it is a
    /// `501 NotImplemented` to a request that used one: the conditional header first (every
    /// `PutObject` has one), then the checksum. `nil`: not a refusal of a feature.
    public static func refused(status: Int, code: String?, sentPrecondition: Bool, sentChecksum: Bool) -> Feature? {
        guard status == 501 || code == "NotImplemented" else { return nil }
        if sentPrecondition { return .conditionalWrites }
        if sentChecksum { return .checksums }
        return nil
    }
}
