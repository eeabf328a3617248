import HaulCore

/// The files a Metalink document lists (RFC 5854 Metalink 4, or the older 3.0): each with its
/// name, size, whole-file digest, piece digests and mirrors in priority order. Everything a
/// hostile document could use against a worker is refused with a usage error saying why:
/// a DOCTYPE or unknown entity, a name that leaves the destination folder or holds control
/// characters, pieces that do not cover exactly the size, too many pieces, mirrors or files,
/// URLs Haul would not fetch, a document past `maxBytes`. Pure.
public struct Metalink: Sendable, Equatable {
    /// The largest document read (16 MiB: a 100 GiB file in 1 MiB pieces needs about 10).
    public static let maxBytes = 16 << 20
    /// The most pieces one file may have.
    public static let maxPieces = 1 << 18
    /// The most mirrors one file may have.
    public static let maxMirrors = 100
    /// The most files one document may list.
    public static let maxFiles = 10_000

    /// One place the file can be fetched from.
    public struct Mirror: Sendable, Equatable {
        /// An http or https URL.
        public let url: String
        /// Lower first (Metalink 4's `priority`; a 3.0 `preference` of 100 is priority 1).
        public let priority: Int
        /// The mirror's country code, if given.
        public let location: String?
    }

    /// The file's digests piece by piece.
    public struct Pieces: Sendable, Equatable {
        /// Bytes in each piece; the last may be shorter.
        public let length: Int64
        /// The digest algorithm.
        public let algorithm: Checksum.Algorithm
        /// Each piece's digest in lowercase hex, in order; exactly ceil(size / length) of them.
        public let hashes: [String]
    }

    /// One `<file>`.
    public struct File: Sendable, Equatable {
        /// The name the Metalink gives, a safe relative path (it may hold folders).
        public let name: String
        /// The size in bytes, if given.
        public let size: Int64?
        /// The strongest whole-file digest Haul verifies, if given.
        public let checksum: Checksum?
        /// The piece digests, if given.
        public let pieces: Pieces?
        /// The mirrors, in priority order (ties kept in document order); empty only while
        /// `metaurls` are still to be followed (`following`).
        public let mirrors: [Mirror]
        /// The `<metaurl mediatype="metalink">`s not followed yet (torrents are left out).
        public let metaurls: [MetaURL]
    }

    /// The files, in document order.
    public let files: [File]

    /// A document of `files`, already checked.
    init(files: [File]) { self.files = files }

    /// Reads a Metalink document. - Throws: a usage error naming what was refused.
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count <= Self.maxBytes else {
            throw HaulError.usage(
                "the Metalink is \(bytes.count) bytes, more than the \(Self.maxBytes) Haul reads", hint: "split it into several Metalinks")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw HaulError.usage("the Metalink is not UTF-8 text", hint: "give a Metalink 4 (.meta4) or 3.0 (.metalink) document")
        }
        let root = try MetalinkXML.parse(text)
        guard root.name == "metalink" else {
            throw HaulError.usage(
                "the document's root is <\(SafeText.cleanLine(root.name))>, not <metalink>", hint: "give a Metalink 4 (.meta4) or 3.0 (.metalink) document")
        }
        let nodes = root.children("file") + root.children("files").flatMap { $0.children("file") }
        guard !nodes.isEmpty else { throw HaulError.usage("the Metalink lists no <file>", hint: "give a Metalink that lists files") }
        guard nodes.count <= Self.maxFiles else {
            throw HaulError.usage("the Metalink lists \(nodes.count) files, more than the \(Self.maxFiles) Haul reads", hint: "split it into several Metalinks")
        }
        var names = Set<String>()
        files = try nodes.map { node in
            let file = try Self.file(node)
            guard names.insert(file.name).inserted else {
                throw HaulError.usage("the Metalink lists the file '\(SafeText.cleanLine(file.name))' twice", hint: "list each file once")
            }
            return file
        }
    }

    private static func file(_ node: XMLNode) throws -> File {
        guard let given = node.attributes["name"] else { throw HaulError.usage("a <file> of the Metalink has no name", hint: "give each <file> a name") }
        let name = try SafePath.validateDestination(given, what: "the Metalink's file name")
        let shown = SafeText.cleanLine(name)
        var size: Int64?
        if let text = node.value("size") {
            guard let value = Int64(text), value >= 0, text.allSatisfy(\.isASCII) else {
                throw HaulError.usage("the Metalink gives '\(shown)' the size '\(SafeText.cleanLine(text))', not a byte count", hint: "give <size> in bytes")
            }
            size = value
        }
        // Metalink 3.0 keeps digests in <verification> and URLs in <resources>.
        let holders = [node] + node.children("verification")
        let checksum = try strongest(holders.flatMap { $0.children("hash") }, of: shown)
        let pieces = try piecesOf(holders.flatMap { $0.children("pieces") }, size: size, of: shown)
        let metaurls = try metaurlsOf(node.children("metaurl"), of: shown)
        let mirrors = try mirrorsOf(
            node.children("url") + node.children("resources").flatMap { $0.children("url") }, of: shown, orElse: !metaurls.isEmpty)
        return File(name: name, size: size, checksum: checksum, pieces: pieces, mirrors: mirrors, metaurls: metaurls)
    }

    /// `sha-256` (Metalink 4) and `sha256` (3.0) alike; `nil` for an algorithm Haul does not verify.
    static func algorithm(_ type: String?) -> Checksum.Algorithm? {
        type.flatMap { Checksum.Algorithm(rawValue: $0.lowercased().replacingOccurrences(of: "-", with: "")) }
    }

    /// Strongest first.
    private static let preference: [Checksum.Algorithm] = [.sha512, .sha256, .sha1, .md5]

    private static func hex(_ text: String, _ algorithm: Checksum.Algorithm, of shown: String) throws -> String {
        let hex = text.trimmingWhitespace().lowercased()
        guard hex.count == algorithm.byteCount * 2, hex.allSatisfy(\.isHexDigit) else {
            throw HaulError.usage(
                "the Metalink's \(algorithm.rawValue) digest for '\(shown)' is not \(algorithm.byteCount * 2) hex digits",
                hint: "check the Metalink: it may be damaged")
        }
        return hex
    }

    private static func strongest(_ hashes: [XMLNode], of shown: String) throws -> Checksum? {
        let known = hashes.compactMap { node in algorithm(node.attributes["type"]).map { (node, $0) } }
        guard let (node, algorithm) = known.min(by: { preference.firstIndex(of: $0.1)! < preference.firstIndex(of: $1.1)! }) else { return nil }
        return Checksum(algorithm: algorithm, hex: try hex(node.text, algorithm, of: shown))
    }

    private static func piecesOf(_ nodes: [XMLNode], size: Int64?, of shown: String) throws -> Pieces? {
        let known = nodes.compactMap { node in algorithm(node.attributes["type"]).map { (node, $0) } }
        guard let (node, algorithm) = known.min(by: { preference.firstIndex(of: $0.1)! < preference.firstIndex(of: $1.1)! }) else { return nil }
        guard let size else {
            throw HaulError.usage("the Metalink gives pieces for '\(shown)' but no <size>", hint: "give the file's <size> with its pieces")
        }
        guard let text = node.attributes["length"], let length = Int64(text), length > 0 else {
            throw HaulError.usage("the Metalink's pieces for '\(shown)' have no valid length", hint: "give <pieces length=\"BYTES\">")
        }
        let hashes = node.children("hash")
        let expected = size == 0 ? 0 : (size - 1) / length + 1
        guard expected <= Int64(maxPieces) else {
            throw HaulError.usage(
                "the Metalink cuts '\(shown)' into \(expected) pieces, more than the \(maxPieces) Haul accepts", hint: "use longer pieces")
        }
        guard Int64(hashes.count) == expected else {
            throw HaulError.usage(
                "the Metalink gives \(hashes.count) pieces of \(length) bytes for '\(shown)', but its \(size) bytes make \(expected)",
                hint: "check the Metalink: its size and pieces disagree")
        }
        return Pieces(length: length, algorithm: algorithm, hashes: try hashes.map { try hex($0.text, algorithm, of: shown) })
    }

    /// Mirror protocols Haul does not fetch but Metalinks often list beside http: left out.
    private static let otherMirrorSchemes: Set<String> = ["ftp", "ftps", "sftp", "rsync"]

    /// The mirrors `nodes` give; none is refused unless `orElse` (metaurls to follow).
    private static func mirrorsOf(_ nodes: [XMLNode], of shown: String, orElse: Bool) throws -> [Mirror] {
        var mirrors: [Mirror] = []
        var seen = Set<String>()
        for node in nodes {
            // A 3.0 torrent entry; Metalink 4 keeps torrents in <metaurl>, which Haul does not follow either.
            if node.attributes["type"]?.lowercased() == "bittorrent" { continue }
            let text = node.text.trimmingWhitespace()
            if let colon = text.firstIndex(of: ":"), otherMirrorSchemes.contains(text[..<colon].lowercased()) { continue }
            let url = try OriginURL.validate(text)
            guard seen.insert(url).inserted else { continue }
            mirrors.append(Mirror(url: url, priority: priority(node), location: node.attributes["location"]))
        }
        return try ordered(mirrors, of: shown, orElse: orElse)
    }

    /// `mirrors` in priority order, checked: at least one (unless `orElse`), at most `maxMirrors`.
    static func ordered(_ mirrors: [Mirror], of shown: String, orElse: Bool = false) throws -> [Mirror] {
        guard !mirrors.isEmpty || orElse else {
            throw HaulError.usage("the Metalink gives no http or https URL for '\(shown)'", hint: "add a <url> Haul can fetch")
        }
        guard mirrors.count <= maxMirrors else {
            throw HaulError.usage(
                "the Metalink lists \(mirrors.count) mirrors for '\(shown)', more than the \(maxMirrors) Haul uses", hint: "keep the nearest ones")
        }
        // A stable sort: equal priorities keep the document's order.
        return mirrors.enumerated().sorted { ($0.element.priority, $0.offset) < ($1.element.priority, $1.offset) }.map(\.element)
    }

    /// Metalink 4 `priority` (1 first) or 3.0 `preference` (100 first); unstated comes last.
    static func priority(_ node: XMLNode) -> Int {
        if let text = node.attributes["priority"], let value = Int(text), value > 0 { return min(value, 999_999) }
        if let text = node.attributes["preference"], let value = Int(text), (0...100).contains(value) { return 101 - value }
        return 999_999
    }
}
