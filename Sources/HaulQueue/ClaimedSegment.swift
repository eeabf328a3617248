import HaulCore
import HaulPostgres

/// A segment a worker holds under a lease, with what it needs of its transfer to fetch it.
public struct ClaimedSegment: Sendable {
    public let id: Int64
    public let transferID: Int64
    public let index: Int
    public let generation: Int
    /// Offset of the segment's first byte in the file.
    public let offset: Int64
    /// Bytes in the segment; `nil` when the body's length is unknown (read to the end).
    public private(set) var length: Int64?
    /// Whether a checkpoint told this worker that a straggler split cut the segment (`shortened`).
    public private(set) var knowsOfCut = false
    /// Bytes already durable from earlier attempts (breakpoint resume starts after them).
    public var bytesDone: Int64
    /// The fence: every write to this row must present it.
    public let leaseToken: String
    public let attempts: Int
    public let transfer: TransferInfo
    /// The mirror this attempt fetches from (`nil`: the transfer's own URL, mirror 0).
    public let mirror: Int?
    /// That mirror's URL.
    public let mirrorURL: String?

    static let returning = Statements.ClaimedSegment.returning

    init(_ row: PostgresRow) throws {
        id = try row.int64("id")
        transferID = try row.int64("transfer_id")
        index = try row.int("idx")
        generation = try row.int("generation")
        offset = try row.int64("byte_offset")
        length = try row.optionalInt64("length")
        bytesDone = try row.int64("bytes_done")
        leaseToken = try row.string("lease_token")
        attempts = try row.int("attempts")
        transfer = try TransferInfo(row, id: transferID)
        mirror = try row.optionalInt64("mirror").map(Int.init)
        mirrorURL = row["mirror_url"]
    }

    /// The inclusive last byte this segment covers, when its length is known.
    public var lastByte: Int64? { length.map { offset + $0 - 1 } }

    /// The same claim after a split cut the segment to `length` bytes.
    public func shortened(to length: Int64) -> ClaimedSegment {
        var copy = self
        copy.length = length
        copy.knowsOfCut = true
        return copy
    }
}

/// What a worker knows of a transfer while it works on it.
public struct TransferInfo: Sendable {
    public let id: Int64
    public let url: String
    /// The URL's `host[:port]` as recorded at enqueue: the key its host's slots are counted under.
    public let host: String
    public let dest: String?
    public let size: Int64?
    public let etag: String?
    public let lastModified: String?
    public let acceptsRanges: Bool
    public let layout: StorageLayout
    public let headers: [Header]
    public let options: TransferOptions
    public let segmentSize: Int64
    public let expectedDigest: String?
    public let priority: Int
    /// On S3 storage, the multipart upload the transfer's segments are parts of.
    public let objectUploadID: String?
    /// The origin's `Content-Type`, once planned.
    public let contentType: String?
    /// Whether the transfer has mirrors (`transfer_mirrors`).
    public let mirrored: Bool
    /// Bytes per piece, when the transfer has piece digests (its segments align to them).
    public let pieceLength: Int64?
    /// The pieces' digest algorithm.
    public let pieceAlgorithm: Checksum.Algorithm?

    /// What runs this transfer again, for the hints of its failures: `'haul retry 12'`, or for a
    /// `haul get` transfer, which only its own command runs, `the same 'haul get' command`.
    public var retryCommand: String {
        options.localTarget == nil ? "'haul retry \(id)'" : "the same 'haul get' command"
    }

    /// Reads the transfer columns of `row`; `columns` decodes the JSON ones (pass one shared
    /// instance when reading many rows).
    init(_ row: PostgresRow, id: Int64, columns: JSONColumns = JSONColumns()) throws {
        self.id = id
        url = try row.string("url")
        host = try row.string("host")
        dest = row["dest"]
        size = try row.optionalInt64("size")
        etag = row["etag"]
        lastModified = row["last_modified"]
        acceptsRanges = row["accepts_ranges"] == "t"
        layout = try StorageLayout(recorded: row.string("layout"))
        headers = columns.headers(row["headers"])
        options = columns.options(row["options"])
        segmentSize = try row.int64("segment_size")
        expectedDigest = row["expected_digest"]
        priority = try row.int("priority")
        objectUploadID = row["object_upload_id"]
        contentType = row["content_type"]
        mirrored = row["mirrored"] == "t"
        pieceLength = try row.optionalInt64("piece_length")
        pieceAlgorithm = row["piece_algorithm"].flatMap(Checksum.Algorithm.init(rawValue:))
    }
}

/// Decodes the JSON columns of transfer rows once per distinct text: the rows a batch claims
/// mostly share their options and headers, and a JSON decoder costs more than the rest of a row.
final class JSONColumns {
    private var options: [String: TransferOptions] = [:]
    private var headers: [String: [Header]] = [:]

    func options(_ json: String?) -> TransferOptions {
        guard let json else { return TransferOptions() }
        if let known = options[json] { return known }
        let decoded = TransferOptions.decode(json)
        options[json] = decoded
        return decoded
    }

    func headers(_ json: String?) -> [Header] {
        guard let json else { return [] }
        if let known = headers[json] { return known }
        let decoded = Header.decode(json)
        headers[json] = decoded
        return decoded
    }
}
