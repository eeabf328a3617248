import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// The flags `haul enqueue` and `haul get` share, turned into a validated `NewTransfer`.
enum TransferFlags {
    static let options: Set<String> = [
        "--segment-size", "--checksum", "--priority", "--layout", "--header", "--ca-cert", "--max-attempts",
        "--extract-to", "--upload-to", "--field", "--upload-protocol",
    ]
    static let flags: Set<String> = ["--insecure", "--record-digest", "--extract", "--delete-after-upload"]

    static let help = """
          --segment-size SIZE   bytes per segment (4096, 512KiB, 8MiB, 1GiB); default: the first
                                8MiB, then a sixteenth of the file, between 8MiB and 128MiB
          --checksum ALGO:HEX   verify the finished file (sha256, sha512, sha1, md5)
          --record-digest       record the file's sha256 even without --checksum
          --header 'Name: value'  extra request header (repeatable; values never shown)
          --priority N          higher runs first (default 0)
          --layout inplace|parts  storage layout (default inplace; parts for object-store mounts)
          --max-attempts N      attempts per segment before the transfer fails (default 6)
          --ca-cert FILE        trust this CA bundle for the origin (or HAUL_CA_BUNDLE on workers)
          --insecure            do not verify the origin's TLS certificate
          --extract             extract the finished zip/tar/tar.gz/gz (refusing unsafe archives)
          --extract-to REL      where to extract (default: the file's name without .zip/.tar.gz/...)
          --upload-to URL       then upload the file as multipart/form-data (or tus) to URL,
                                or as an object to s3://BUCKET/KEY
          --field NAME=VALUE    a text field sent with the upload (repeatable)
          --upload-protocol multipart|tus  (default multipart)
          --delete-after-upload remove the local file once the upload succeeded
        """

    /// Validates the URL and every shared flag; nothing touches the database.
    static func build(url: String, dest: String?, _ arguments: Arguments) throws -> NewTransfer {
        let url = try OriginURL.validate(url)
        let dest = try dest.map { try SafePath.validate($0) }
        var request = NewTransfer(url: url, dest: dest, segmentSize: try arguments.size("--segment-size") ?? (8 << 20))
        request.options.automaticSegments = arguments.value("--segment-size") == nil ? true : nil
        request.checksum = try arguments.value("--checksum").map { try Checksum(parsing: $0) }
        request.priority = try arguments.int("--priority") ?? 0
        let layout = arguments.value("--layout") ?? "inplace"
        guard ["inplace", "parts"].contains(layout) else {
            throw HaulError.usage("--layout '\(layout)' is not a layout", hint: "use inplace (default) or parts")
        }
        request.layout = layout
        request.headers = try arguments.all("--header").map(Header.parse)
        request.options.insecure = arguments.has("--insecure") ? true : nil
        request.options.recordDigest = arguments.has("--record-digest") ? true : nil
        request.options.maxAttempts = try arguments.positiveInt("--max-attempts")
        if let ca = arguments.value("--ca-cert") {
            let absolute = ca.hasPrefix("/") ? ca : FileManager.default.currentDirectoryPath + "/" + ca
            guard FileManager.default.isReadableFile(atPath: absolute) else {
                throw HaulError.usage("--ca-cert '\(ca)' is not a readable file", hint: "give the path of a PEM CA bundle")
            }
            request.options.caCert = absolute
        }
        try addFinalizerOptions(arguments, to: &request)
        return request
    }

    private static func addFinalizerOptions(_ arguments: Arguments, to request: inout NewTransfer) throws {
        if arguments.has("--extract") || arguments.value("--extract-to") != nil {
            request.options.extract = true
            request.options.extractTo = try arguments.value("--extract-to").map { try SafePath.validate($0, what: "--extract-to") }
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
        } else if !arguments.all("--field").isEmpty || arguments.value("--upload-protocol") != nil || arguments.has("--delete-after-upload") {
            throw HaulError.usage("--field, --upload-protocol and --delete-after-upload go with --upload-to")
        }
    }
}
