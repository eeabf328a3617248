import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// The flags `haul enqueue` and `haul get` share, turned into a validated `NewTransfer`.
enum TransferFlags {
    static let options: Set<String> = ["--segment-size", "--checksum", "--priority", "--layout", "--header", "--ca-cert", "--max-attempts"]
    static let flags: Set<String> = ["--insecure", "--record-digest"]

    static let help = """
          --segment-size SIZE   bytes per segment (default 8MiB; 4096, 512KiB, 8MiB, 1GiB)
          --checksum ALGO:HEX   verify the finished file (sha256, sha512, sha1, md5)
          --record-digest       record the file's sha256 even without --checksum
          --header 'Name: value'  extra request header (repeatable; values never shown)
          --priority N          higher runs first (default 0)
          --layout inplace|parts  storage layout (default inplace; parts for object-store mounts)
          --max-attempts N      attempts per segment before the transfer fails (default 6)
          --ca-cert FILE        trust this CA bundle for the origin (or HAUL_CA_BUNDLE on workers)
          --insecure            do not verify the origin's TLS certificate
        """

    /// Validates the URL and every shared flag; nothing touches the database.
    static func build(url: String, dest: String?, _ arguments: Arguments) throws -> NewTransfer {
        let url = try OriginURL.validate(url)
        let dest = try dest.map { try SafePath.validate($0) }
        var request = NewTransfer(url: url, dest: dest, segmentSize: try arguments.size("--segment-size") ?? (8 << 20))
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
        return request
    }
}
