import Foundation
import HaulCore

/// Per-transfer settings the finalizer and fetchers read from `transfers.options`: the fields
/// of `Fields`, read and set as `options.extract`.
///
/// The fields are kept once and shared by copies, and a change makes a copy of its own: a
/// manifest's lines all start from the options of its command line, and each line's request
/// held copies of their 350 bytes (`haul enqueue` kept 1.27 KiB a line, 0.68 KiB since).
@dynamicMemberLookup
public struct TransferOptions: Codable, Sendable, Equatable {
    /// The settings themselves.
    public struct Fields: Codable, Sendable, Equatable {
        /// Skip TLS verification for this origin (only when asked for with `--insecure`).
        public var insecure: Bool?
        /// A CA bundle path (on the workers) to verify this origin with.
        public var caCert: String?
        /// Record the computed sha256 even when no digest is expected.
        public var recordDigest: Bool?
        /// Extract the finished archive.
        public var extract: Bool?
        /// Where to extract, relative to the storage root (default: next to the file, without its extension).
        public var extractTo: String?
        /// Refuse an extraction past this many bytes (lowers, never raises, a worker's own limit).
        public var extractMaxSize: Int64?
        /// Refuse a compressed entry that expands more than this many times (lowers, never raises, a worker's own limit).
        public var extractMaxRatio: Int64?
        /// Upload the finished file to this URL.
        public var uploadTo: String?
        /// `NAME=VALUE` fields sent with the upload: multipart form fields, or tus `Upload-Metadata`.
        public var uploadFields: [String]?
        /// `multipart` (default) or `tus`.
        public var uploadProtocol: String?
        /// Delete the local file once the upload succeeded.
        public var deleteAfterUpload: Bool?
        /// How many attempts a segment gets before the transfer fails.
        public var maxAttempts: Int?
        /// The transfer's own lowest speed in bytes per second (`enqueue --lowest-speed`; 0: off),
        /// instead of its worker's.
        public var lowestSpeed: Int64?
        /// The transfer's own lowest-speed time in seconds (`enqueue --lowest-speed-time`).
        public var lowestSpeedTime: Int?
        /// The largest file this transfer may bring (`--max-file-size`).
        public var maxFileSize: Int64?
        /// Follow redirects from https to http even without a checksum (`--allow-downgrade`).
        public var allowDowngrade: Bool?
        /// A CA bundle to verify the upload target with (`--upload-ca-cert`); the origin's does not apply.
        public var uploadCaCert: String?
        /// Skip TLS verification of the upload target (`--upload-insecure`).
        public var uploadInsecure: Bool?
        /// No segment size was given: the planner sizes segments by the file (`SegmentPlan.automaticSegmentSize`).
        public var automaticSegments: Bool?
        /// For `haul get`: the local file (or folder, when named by the origin) it writes, so a rerun resumes it.
        public var localTarget: String?
        /// For `haul get` without `--force`: a name taken from the origin never replaces an existing file.
        public var keepExisting: Bool?
        /// For such a get: the names in its folder that earlier gets of the same URL wrote, which
        /// the origin's name may replace (a rerun fetches again what haul saved, as with `-o FILE`).
        public var replaceable: [String]?

        /// Set by the planner on a fleet transfer whose name the origin gave (no `--dest`): its
        /// finalizer checks the name again before publishing, and a restart forgets the name.
        public var namedByOrigin: Bool?

        /// `haul enqueue --force` (or `haul retry --force`): the transfer replaces whatever is at its
        /// destination, also a file Haul did not write (without it, such a file is kept and the
        /// transfer fails with `destination-exists`).
        public var replaceExisting: Bool?

        /// `haul get -N`: fetch only when the origin's copy is newer than the file already there
        /// (compared by its modification time when no earlier transfer recorded validators).
        public var timestamping: Bool?

        /// The size a Metalink gives the file: the probed origin must agree, or the plan fails.
        public var expectedSize: Int64?

        /// Ignore the mirrors and digest an origin names in its headers (RFC 6249; `--no-mirror-headers`).
        public var ignoreMirrorHeaders: Bool?

        /// Set by the planner on a transfer with mirrors: the mirror that answered its probe (the
        /// first that did, in priority order), whose validators the segments on it are checked against.
        public var probedMirror: Int?

        /// No options set.
        public init() {}

        enum CodingKeys: String, CodingKey {
            case insecure, caCert = "ca_cert", recordDigest = "record_digest", extract, extractTo = "extract_to"
            case extractMaxSize = "extract_max_size", extractMaxRatio = "extract_max_ratio"
            case uploadTo = "upload_to", uploadFields = "upload_fields", uploadProtocol = "upload_protocol"
            case deleteAfterUpload = "delete_after_upload", maxAttempts = "max_attempts", maxFileSize = "max_file_size", allowDowngrade = "allow_downgrade",
                uploadCaCert = "upload_ca_cert", uploadInsecure = "upload_insecure", localTarget = "local_target", automaticSegments = "automatic_segments"
            case lowestSpeed = "lowest_speed", lowestSpeedTime = "lowest_speed_time"
            case keepExisting = "keep_existing", replaceable, timestamping, namedByOrigin = "named_by_origin", replaceExisting = "replace_existing"
            case expectedSize = "expected_size", ignoreMirrorHeaders = "ignore_mirror_headers", probedMirror = "probed_mirror"
        }
    }

    /// The fields, never changed once boxed: a change boxes a changed copy.
    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private static let none = Box(Fields())
    private var box: Box

    /// No options set.
    public init() { box = Self.none }

    /// A field, read from the shared box; set, in a box of this value's own.
    public subscript<Value>(dynamicMember field: WritableKeyPath<Fields, Value>) -> Value {
        get { box.fields[keyPath: field] }
        set {
            var fields = box.fields
            fields[keyPath: field] = newValue
            box = Box(fields)
        }
    }

    /// Decodes the fields (the JSON of `transfers.options`).
    public init(from decoder: any Decoder) throws {
        box = Box(try Fields(from: decoder))
    }

    /// Encodes the fields, as they were encoded before they were boxed.
    public func encode(to encoder: any Encoder) throws {
        try box.fields.encode(to: encoder)
    }

    /// Equal fields, shared or not.
    public static func == (a: TransferOptions, b: TransferOptions) -> Bool {
        a.box === b.box || a.box.fields == b.box.fields
    }

    /// The options as the JSON text stored in the database.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// Decodes stored options, treating anything unreadable as "no options".
    public static func decode(_ json: String?) -> TransferOptions {
        guard let json, let value = try? JSONDecoder().decode(TransferOptions.self, from: Data(json.utf8)) else { return TransferOptions() }
        return value
    }
}

/// A validated request to download one URL; build it with the checks in `Validation`.
public struct NewTransfer: Sendable {
    /// The origin URL (http or https), possibly with credentials in it.
    public var url: String
    /// Destination relative to the storage root; `nil` names the file from the response.
    public var dest: String?
    /// Bytes per segment.
    public var segmentSize: Int64
    /// Expected digest as `algo:hex`.
    public var checksum: Checksum?
    /// Higher runs first.
    public var priority: Int
    /// `inplace` or `parts`.
    public var layout: StorageLayout
    /// Extra request headers as (name, value).
    public var headers: [Header]
    /// Finalizer and TLS options.
    public var options: TransferOptions
    /// The batch this transfer belongs to, by id.
    public var batchID: Int64?
    /// The only worker allowed to work on it (`haul get` pins its transfer to its own process).
    public var owner: String?
    /// Further URLs of the same file (`--mirror`, a Metalink), in priority order after `url`.
    public var mirrors: [String] = []
    /// Digests piece by piece (a Metalink's `<pieces>`): segments align to them.
    public var pieces: PieceDigests?

    /// A request with the defaults `haul enqueue` uses.
    public init(url: String, dest: String?, segmentSize: Int64 = 8 << 20) {
        self.url = url
        self.dest = dest
        self.segmentSize = segmentSize
        self.checksum = nil
        self.priority = 0
        self.layout = .inplace
        self.headers = []
        self.options = TransferOptions()
        self.batchID = nil
        self.owner = nil
    }
}

/// One request header.
public struct Header: Codable, Sendable, Equatable {
    /// The field name, as given.
    public var name: String
    /// The field value; may be a secret.
    public var value: String

    /// Creates a header.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value`, refusing text that is not a header line.
    public static func parse(_ text: String) throws -> Header {
        guard let colon = text.firstIndex(of: ":") else {
            throw HaulError.usage("--header '\(Redaction.headerLine(text))' is not 'Name: value'", hint: "write it as --header 'Accept: application/json'")
        }
        let name = text[..<colon].trimmingWhitespace()
        let value = text[text.index(after: colon)...].trimmingWhitespace()
        let token = name.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 32 && $0.value < 127 && !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains($0) }
        guard !name.isEmpty, token, !value.contains("\n"), !value.contains("\r") else {
            throw HaulError.usage("--header has an invalid name or value", hint: "a header name is one word such as X-Token, and the value is on one line")
        }
        return Header(name: name, value: value)
    }

    /// Headers as stored in `transfers.headers`.
    public static func json(_ headers: [Header]) -> String {
        String(decoding: (try? JSONEncoder().encode(headers)) ?? Data("[]".utf8), as: UTF8.self)
    }

    /// Decodes stored headers.
    public static func decode(_ json: String?) -> [Header] {
        guard let json, let headers = try? JSONDecoder().decode([Header].self, from: Data(json.utf8)) else { return [] }
        return headers
    }
}

/// A file's digests piece by piece, as a Metalink gives them.
public struct PieceDigests: Sendable, Equatable {
    /// Bytes in each piece; the last may be shorter.
    public let length: Int64
    /// The digest algorithm.
    public let algorithm: Checksum.Algorithm
    /// Each piece's digest in lowercase hex, in order.
    public let hashes: [String]

    /// Digests of pieces of `length` bytes.
    public init(length: Int64, algorithm: Checksum.Algorithm, hashes: [String]) {
        self.length = length
        self.algorithm = algorithm
        self.hashes = hashes
    }
}
