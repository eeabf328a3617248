import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// The flags `haul enqueue` and `haul get` share, turned into a validated `NewTransfer`.
enum TransferFlags {
    static let options: Set<String> = [
        "--segment-size", "--max-file-size", "--checksum", "--priority", "--layout", "--header", "--ca-cert", "--max-attempts",
        "--extract-to", "--extract-max-size", "--extract-max-ratio", "--upload-to", "--field", "--upload-protocol", "--upload-ca-cert", "--user-agent",
    ]
    static let flags: Set<String> = ["--insecure", "--record-digest", "--extract", "--delete-after-upload", "--allow-downgrade", "--upload-insecure"]

    static let help = """
          --segment-size SIZE   bytes per segment (64KiB, 512KiB, 8MiB, 1GiB); default: the first
                                8MiB, then a sixteenth of the file, between 8MiB and 128MiB;
                                at least 64KiB, and grown to keep a file within 10000 segments
          --max-file-size SIZE  fail the transfer if the origin announces more (files bigger
                                than the storage are always refused, bigger than its free
                                space retried)
          --checksum ALGO:HEX   verify the finished file (sha256, sha512, sha1, md5)
          --record-digest       record the file's sha256 even without --checksum
          --header 'Name: value'  extra request header (repeatable; values never shown)
          --user-agent TEXT     the User-Agent sent to the origin (default haul/VERSION)
          --priority N          higher runs first (default 0)
          --layout inplace|parts  storage layout (default inplace; parts for object-store mounts)
          --max-attempts N      attempts per segment before the transfer fails (default 6)
          --ca-cert FILE        trust this CA bundle for the origin (or HAUL_CA_BUNDLE on workers)
          --insecure            do not verify the origin's TLS certificate
          --allow-downgrade     follow a redirect from https to http even without --checksum
                                (with a checksum it is followed, and logged)
          --extract             extract the finished zip/tar/tar.gz/gz (refusing unsafe archives)
          --extract-to REL      where to extract (default: the file's name without .zip/.tar.gz/...)
          --extract-max-size SIZE   refuse archives expanding past SIZE (default: 1032 times the
                                archive; always capped by free space less a reserve)
          --extract-max-ratio N  refuse a compressed entry expanding more than N times (default:
                                no limit)
          --upload-to URL       then upload the file as multipart/form-data (or tus) to URL,
                                or as an object to s3://BUCKET/KEY
          --field NAME=VALUE    a text field sent with the upload (repeatable; tus: Upload-Metadata)
          --upload-protocol multipart|tus  (default multipart)
          --delete-after-upload remove the local file once the upload succeeded
          --upload-ca-cert FILE trust this CA bundle for the upload target (--ca-cert and
                                --insecure apply to the origin only)
          --upload-insecure     do not verify the upload target's TLS certificate
        """

    /// Validates the URL and every shared flag; nothing touches the database.
    static func build(url: String, dest: String?, _ arguments: Arguments) throws -> NewTransfer {
        let url = try OriginURL.validate(url)
        let dest = try dest.map { try SafePath.validateDestination($0) }
        let segmentSize = try arguments.size("--segment-size")
        try segmentSize.map { try PlanLimits.validateSegmentSize($0) }
        var request = NewTransfer(url: url, dest: dest, segmentSize: segmentSize ?? (8 << 20))
        request.options.maxFileSize = try arguments.size("--max-file-size")
        request.options.automaticSegments = arguments.value("--segment-size") == nil ? true : nil
        request.checksum = try arguments.value("--checksum").map { try Checksum(parsing: $0) }
        request.priority = try arguments.int("--priority") ?? 0
        let layout = arguments.value("--layout") ?? "inplace"
        guard ["inplace", "parts"].contains(layout) else {
            throw HaulError.usage("--layout '\(layout)' is not a layout", hint: "use inplace (default) or parts")
        }
        request.layout = layout
        request.headers = try arguments.all("--header").map(Header.parse)
        if let agent = arguments.value("--user-agent") {
            guard !agent.isEmpty, !agent.contains(where: \.isNewline) else { throw HaulError.usage("--user-agent must be one non-empty line") }
            request.headers.removeAll { $0.name.lowercased() == "user-agent" }
            request.headers.append(Header(name: "User-Agent", value: agent))
        }
        request.options.insecure = arguments.has("--insecure") ? true : nil
        request.options.allowDowngrade = arguments.has("--allow-downgrade") ? true : nil
        request.options.recordDigest = arguments.has("--record-digest") ? true : nil
        request.options.maxAttempts = try arguments.positiveInt("--max-attempts")
        request.options.caCert = try caBundle(arguments, "--ca-cert")
        try addFinalizerOptions(arguments, to: &request)
        return request
    }

    private static func addFinalizerOptions(_ arguments: Arguments, to request: inout NewTransfer) throws {
        let limits = ["--extract-to", "--extract-max-size", "--extract-max-ratio"]
        if arguments.has("--extract") || limits.contains(where: { arguments.value($0) != nil }) {
            request.options.extract = true
            request.options.extractTo = try arguments.value("--extract-to").map { try SafePath.validate($0, what: "--extract-to") }
            request.options.extractMaxSize = try arguments.size("--extract-max-size")
            request.options.extractMaxRatio = try arguments.positiveInt("--extract-max-ratio").map(Int64.init)
        }
        if let upload = arguments.value("--upload-to") {
            request.options.uploadTo = try UploadTarget.validate(upload)
            request.options.uploadFields = try arguments.all("--field").map { field in
                guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
                    throw HaulError.usage("--field '\(field)' is not NAME=VALUE")
                }
                return field
            }
            let proto = arguments.value("--upload-protocol") ?? "multipart"
            guard ["multipart", "tus"].contains(proto) else { throw HaulError.usage("--upload-protocol '\(proto)' is not multipart or tus") }
            request.options.uploadProtocol = proto
            request.options.deleteAfterUpload = arguments.has("--delete-after-upload") ? true : nil
            request.options.uploadCaCert = try caBundle(arguments, "--upload-ca-cert")
            request.options.uploadInsecure = arguments.has("--upload-insecure") ? true : nil
        } else if !arguments.all("--field").isEmpty || arguments.value("--upload-protocol") != nil || arguments.has("--delete-after-upload")
            || arguments.value("--upload-ca-cert") != nil || arguments.has("--upload-insecure")
        {
            throw HaulError.usage("--field, --upload-protocol, --delete-after-upload, --upload-ca-cert and --upload-insecure go with --upload-to")
        }
    }

    /// The absolute path of a readable CA bundle given with `flag`, if any.
    private static func caBundle(_ arguments: Arguments, _ flag: String) throws -> String? {
        guard let ca = arguments.value(flag) else { return nil }
        let absolute = ca.startsWithSlash ? ca : FileManager.default.currentDirectoryPath + "/" + ca
        guard FileManager.default.isReadableFile(atPath: absolute) else {
            throw HaulError.usage("\(flag) '\(ca)' is not a readable file", hint: "give the path of a PEM CA bundle")
        }
        return absolute
    }
}
