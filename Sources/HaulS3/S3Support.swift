import Foundation
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
    private let md5Required = Atomic<Bool>(false)

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

    /// Whether the store asked for `Content-MD5` on a streamed `PutObject` (a bucket with Object
    /// Lock retention): such bodies are then read whole before they are sent, to digest them.
    public var requiresContentMD5: Bool { md5Required.load(ordering: .relaxed) }

    /// Records that the store requires `Content-MD5`. - Returns: whether this is the first time.
    @discardableResult
    public func requireContentMD5() -> Bool {
        !md5Required.exchange(true, ordering: .relaxed)
    }

    /// Whether an answer refuses a `PutObject` for lacking `Content-MD5` or a checksum, as AWS
    /// (`InvalidRequest`, naming `Content-MD5`) and moto do in a bucket with Object Lock retention.
    public static func asksForContentMD5(status: Int, code: String?, message: String?) -> Bool {
        guard status == 400 else { return false }
        return code == "MissingUploadObjectWithObjectLockHeaders" || (code == "InvalidRequest" && message?.contains("Content-MD5") == true)
    }

    /// The `Content-MD5` header line of `bytes`.
    public static func contentMD5(_ bytes: Data) -> String {
        let digester = Digester(.md5)
        bytes.withUnsafeBytes { digester.update($0) }
        return "Content-MD5: \(Data(digester.finish().bytes).base64EncodedString())"
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
