import HaulCore
import HaulPostgres

extension TransferStore {
    /// Records `request`'s mirrors (its own URL first) and piece digests for transfer `id`;
    /// nothing when it has neither. Run it in the transaction that inserts the transfer, or
    /// before any worker may plan it.
    static func recordMirrors(_ id: Int64, _ request: NewTransfer, _ db: PostgresConnection) throws {
        guard !request.mirrors.isEmpty || request.pieces != nil else { return }
        let urls = [request.url] + request.mirrors
        try db.query(
            Statements.TransferStore.recordMirrors, [id, urls, OriginURL.hostKeys(urls)])
        try db.query(
            Statements.TransferStore.recordPieces,
            [id, request.pieces?.length, request.pieces?.algorithm.rawValue, request.pieces?.hashes])
    }

    /// `recordMirrors` for the manifest lines of batch `batchID` that name mirrors, found by
    /// URL and destination; a transfer that has its mirrors already keeps them.
    static func recordBatchMirrors(_ entries: [NewTransfer], batchID: Int64, _ db: PostgresConnection) throws {
        guard !entries.isEmpty else { return }
        // Tab-joined per entry: a validated URL holds no tab.
        let urls = entries.map { ([$0.url] + $0.mirrors).joined(separator: "\t") }
        let hosts = entries.map { OriginURL.hostKeys([$0.url] + $0.mirrors).joined(separator: "\t") }
        try db.query(
            Statements.TransferStore.recordBatchMirrors, [batchID, entries.map(\.url), entries.map { $0.dest ?? "" }, urls, hosts])
    }

    /// The mirrors and digest an origin's response named (RFC 6249), for a transfer given
    /// none: mirrors it has already (`--mirror`, a Metalink, an earlier plan) are kept, as is
    /// an expected digest.
    static func recordOriginMirrors(_ mirrors: [String], digest: Checksum?, of info: TransferInfo, _ db: PostgresConnection) throws {
        if let digest, info.expectedDigest == nil {
            try db.query(Statements.TransferStore.originDigest, [info.id, digest.description])
        }
        guard !mirrors.isEmpty, !info.mirrored else { return }
        let urls = [info.url] + mirrors
        try db.query(
            Statements.TransferStore.recordOriginMirrors, [info.id, urls, OriginURL.hostKeys(urls)])
        try db.query(Statements.TransferStore.markMirrored, [info.id])
    }

    /// Each mirror of transfer `id`, in priority order (none for a transfer without mirrors).
    public func mirrors(of id: Int64) throws -> [MirrorStatus] {
        try db.query(
            Statements.TransferStore.mirrors, [id]
        ).rows.map(MirrorStatus.init)
    }
}

/// One mirror of a transfer, as `status` shows it.
public struct MirrorStatus: Sendable, Equatable {
    /// Its place in priority order; 0 is the transfer's own URL.
    public let index: Int
    /// The URL (may hold credentials: redact before showing).
    public let url: String
    /// Bytes it has brought.
    public let bytes: Int64
    /// Attempts on it that failed.
    public let failures: Int
    /// `healthy`; `resting` until `retryAfter` after it refused, failed or crawled; `trial`
    /// (given one segment after its rest: served, it is healthy again); or `demoted` for good
    /// (it served a bad piece or another size).
    public let state: String
    /// Why it rests, is on trial or was demoted.
    public let reason: String?
    /// When a resting mirror is tried again (`YYYY-MM-DD HH:MM:SS UTC`).
    public let retryAfter: String?
    /// Bytes per second of its last attempt that served (`nil`: none long enough to tell).
    public let rate: Int64?

    init(_ row: PostgresRow) throws {
        index = try row.int("idx")
        url = try row.string("url")
        bytes = try row.int64("bytes")
        failures = try row.int("failures")
        state = try row.string("state")
        reason = row["reason"]
        retryAfter = row["retry_after"]
        rate = row["rate"].flatMap { Int64($0) }
    }
}
