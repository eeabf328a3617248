import Foundation
import HaulCore
import HaulHTTP
import HaulMetalink
import HaulQueue

/// `--mirror URL` and `--metalink FILE`, shared by `get` and `enqueue`.
enum MirrorFlags {
    static let options: Set<String> = ["--mirror", "--metalink"]
    static let flags: Set<String> = ["--no-mirror-headers"]

    static let help = """
          --mirror URL          another URL of the same file (repeatable); segments spread
                                over all of them, a failing mirror hands its segments on
          --metalink FILE|URL   fetch the files a Metalink (.meta4 or 3.0 .metalink) lists,
                                from its mirrors (and those of the Metalinks its
                                <metaurl>s name), each piece verified with its digests
          --no-mirror-headers   ignore the mirrors (Link: rel=duplicate) and digest (Digest:)
                                an origin names in its headers (RFC 6249)
        """

    /// The `--metalink` document (a file, or an http(s) URL), read and checked, the other
    /// Metalinks its `<metaurl>`s name followed; `nil` when none was given.
    static func metalink(_ arguments: Arguments) throws -> Metalink? {
        try document(arguments)?.following { try download($0, arguments) }
    }

    private static func document(_ arguments: Arguments) throws -> Metalink? {
        guard let path = arguments.value("--metalink") else { return nil }
        if path.contains("://") { return try Metalink(parsing: download(try OriginURL.validate(path), arguments)) }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw HaulError.usage("cannot read the Metalink '\(SafeText.cleanLine(path))'", hint: "give the path of a .meta4 or .metalink file")
        }
        defer { try? handle.close() }
        // One byte past the limit is enough to refuse it.
        let data = try handle.read(upToCount: Metalink.maxBytes + 1) ?? Data()
        return try Metalink(parsing: Array(data))
    }

    /// The body of the Metalink at `url`, refused past `Metalink.maxBytes`; fetched under the
    /// same address policy as the files (`--deny-private-addresses`).
    private static func download(_ url: String, _ arguments: Arguments) throws -> [UInt8] {
        var request = FetchRequest(url: url)
        request.addressPolicy = try WorkerCommand.addressPolicy(arguments)
        var body: [UInt8] = []
        try HTTPClient().fetch(
            request,
            onHead: { head in
                guard head.status == 200 else { throw StatusPolicy.error(for: head, url: url) }
            },
            onData: { bytes in
                guard body.count + bytes.count <= Metalink.maxBytes else {
                    throw HaulError.usage(
                        "the Metalink at \(SafeText.cleanLine(Redaction.url(url))) is more than the \(Metalink.maxBytes) bytes Haul reads",
                        hint: "split it into several Metalinks")
                }
                body.append(contentsOf: bytes)
            })
        return body
    }

    /// `--no-mirror-headers` on `request`.
    static func applyFlags(_ arguments: Arguments, to request: inout NewTransfer) {
        request.options.ignoreMirrorHeaders = arguments.has("--no-mirror-headers") ? true : nil
    }

    /// The `--mirror` URLs, validated.
    static func mirrors(_ arguments: Arguments) throws -> [String] {
        try arguments.all("--mirror").map { try OriginURL.validate($0) }
    }

    /// The request for `file` of a Metalink: its first mirror is the URL, the others mirrors;
    /// its digests are checked (a `--checksum` given wins); segments are whole pieces.
    static func apply(_ file: Metalink.File, to request: inout NewTransfer) {
        request.mirrors = file.mirrors.dropFirst().map(\.url)
        request.checksum = request.checksum ?? file.checksum
        request.options.expectedSize = file.size
        if let pieces = file.pieces {
            request.pieces = PieceDigests(length: pieces.length, algorithm: pieces.algorithm, hashes: pieces.hashes)
            request.segmentSize = max(1, (request.segmentSize + pieces.length - 1) / pieces.length) * pieces.length
            request.options.automaticSegments = nil
        }
    }
}
