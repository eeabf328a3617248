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
        "--netrc-file", "--retry", "--lowest-speed", "--lowest-speed-time",
    ]
    static let flags: Set<String> = [
        "--netrc", "--insecure", "--record-digest", "--extract", "--delete-after-upload", "--allow-downgrade", "--upload-insecure",
    ]

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
          --header @FILE        the headers in FILE, one 'Name: value' a line ('#' comments):
                                a secret there is not in the command line, which ps shows
          --netrc               log in with the entry for the URL's host in $NETRC or
                                ~/.netrc (machine HOST login USER password PASS, or default);
                                sent only to that host, never to a redirect's other host
          --netrc-file FILE     the same from FILE
          --user-agent TEXT     the User-Agent sent to the origin (default haul/VERSION)
          --priority N          higher runs first (default 0)
          --layout inplace|parts  storage layout (default inplace; parts for object-store mounts)
          --max-attempts N      attempts per segment before the transfer fails (default 6)
          --retry N             N more attempts after the first, as curl says it (--max-attempts N+1)
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
          --delete-after-upload remove the stored file (or object) once the upload succeeded
          --upload-ca-cert FILE trust this CA bundle for the upload target (--ca-cert and
                                --insecure apply to the origin only)
          --upload-insecure     do not verify the upload target's TLS certificate
        """

    /// What the flags say that is read from files once for every URL of a command: the
    /// headers (`--header @FILE` read, `--user-agent` in), and the netrc (`--netrc`, `--netrc-file`).
    struct Secrets {
        var headers: [Header]
        var netrc: Netrc?
    }

    /// Reads the header files and the netrc the flags name; one that cannot be read, or a
    /// header that is not one, is a usage error.
    static func secrets(_ arguments: Arguments) throws -> Secrets {
        var headers = try HeaderFile.expand(arguments.all("--header"), read: HeaderFile.read)
        if let agent = arguments.value("--user-agent") {
            guard !agent.isEmpty, !agent.contains(where: \.isNewline) else { throw HaulError.usage("--user-agent must be one non-empty line") }
            headers.removeAll { $0.name.lowercased() == "user-agent" }
            headers.append(Header(name: "User-Agent", value: agent))
        }
        return Secrets(headers: headers, netrc: try netrc(arguments))
    }

    /// The netrc of `--netrc-file FILE`, or of `--netrc` ($NETRC, else ~/.netrc), if asked for.
    static func netrc(_ arguments: Arguments) throws -> Netrc? {
        let environment = ProcessInfo.processInfo.environment
        let path: String
        if let file = arguments.value("--netrc-file") {
            path = file
        } else if arguments.has("--netrc") {
            guard let chosen = environment["NETRC"].flatMap({ $0.isEmpty ? nil : $0 }) ?? environment["HOME"].map({ $0 + "/.netrc" }) else {
                throw HaulError.usage("--netrc finds no netrc: HOME is not set", hint: "give --netrc-file FILE")
            }
            path = chosen
        } else {
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HaulError.usage("cannot read the netrc file '\(path)'", hint: "create it (machine HOST login USER password PASS), or give --netrc-file FILE")
        }
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & 0o077 != 0 {
            Output.error("haul: warning: \(path) can be read by other users; chmod 600 it")
        }
        return Netrc(parsing: String(decoding: data, as: UTF8.self))
    }

    /// Adds the netrc's login for `request`'s host as an `Authorization` header, which goes to
    /// that origin only (redirects elsewhere drop it), unless the URL has its own `user@` or
    /// an `Authorization` header was given: those win, as they do for curl.
    static func authorize(_ request: inout NewTransfer, from netrc: Netrc?) {
        if let login = netrcLogin(for: request.url, headers: request.headers, from: netrc) { request.headers.append(login) }
    }

    /// The `Authorization` header the netrc gives `url`: its host's entry (or `default`), unless
    /// the URL has its own `user:password@` or `headers` already hold an `Authorization`. A URL
    /// with a user and no password (`https://alice@host/`) gets that user's password, as curl
    /// gives it; the header then takes the place of the URL's empty password.
    static func netrcLogin(for url: String, headers: [Header], from netrc: Netrc?) -> Header? {
        guard let netrc, let components = URLComponents(string: url), components.password == nil, let host = components.host,
            !headers.contains(where: { $0.name.lowercased() == "authorization" }),
            let entry = netrc.entry(for: host, login: components.user.flatMap { $0.isEmpty ? nil : $0 })
        else { return nil }
        return Header(name: "Authorization", value: entry.basicAuthorization)
    }

    /// Validates the URL and every shared flag; nothing touches the database.
    static func build(url: String, dest: String?, _ arguments: Arguments, _ secrets: Secrets) throws -> NewTransfer {
        let url = try OriginURL.validate(url)
        let dest = try dest.map { try SafePath.validateDestination($0) }
        let segmentSize = try arguments.size("--segment-size")
        try segmentSize.map { try PlanLimits.validateSegmentSize($0) }
        var request = NewTransfer(url: url, dest: dest, segmentSize: segmentSize ?? (8 << 20))
        request.options.maxFileSize = try arguments.size("--max-file-size")
        request.options.automaticSegments = arguments.value("--segment-size") == nil ? true : nil
        request.checksum = try arguments.value("--checksum").map { try Checksum(parsing: $0) }
        request.priority = try arguments.int("--priority") ?? 0
        let text = arguments.value("--layout") ?? StorageLayout.inplace.rawValue
        // `s3` is not chosen: a worker on S3 storage records it when it plans the transfer.
        guard let layout = StorageLayout(rawValue: text), layout != .s3 else {
            throw HaulError.usage("--layout '\(text)' is not a layout", hint: "use inplace (default) or parts")
        }
        request.layout = layout
        request.headers = secrets.headers
        authorize(&request, from: secrets.netrc)
        request.options.insecure = arguments.has("--insecure") ? true : nil
        request.options.allowDowngrade = arguments.has("--allow-downgrade") ? true : nil
        request.options.recordDigest = arguments.has("--record-digest") ? true : nil
        request.options.maxAttempts = try maxAttempts(arguments)
        request.options.lowestSpeed = try arguments.value("--lowest-speed").map { $0 == "0" ? 0 : try ByteSize.parse($0, flag: "--lowest-speed") }
        request.options.lowestSpeedTime = try arguments.duration("--lowest-speed-time", allowZero: true).map { Int($0.rounded(.up)) }
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

    /// `--max-attempts N`, or curl's `--retry N` as `N + 1` attempts (not both).
    static func maxAttempts(_ arguments: Arguments) throws -> Int? {
        guard let retries = arguments.value("--retry") else { return try arguments.positiveInt("--max-attempts") }
        guard arguments.value("--max-attempts") == nil else {
            throw HaulError.usage("--retry and --max-attempts say the same", hint: "give one of them (--retry N is --max-attempts N+1)")
        }
        guard let number = Int(retries), number >= 0, number < Int.max else {
            throw HaulError.usage("--retry '\(retries)' is not a whole number of retries (0 or more)")
        }
        return number + 1
    }
}
