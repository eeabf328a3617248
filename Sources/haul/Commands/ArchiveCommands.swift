import HaulArchive
import HaulCore

enum ZipCommand: Command {
    static let name = "zip"
    static let summary = "create a zip archive from files and directories"
    static let help = """
        usage: haul zip OUT.zip PATH... [--level N | --store] [--force]

        Creates a zip archive. A directory adds its contents relative to itself (empty
        directories kept); a file adds itself under its base name; symlinks inside a
        directory are stored as symlinks. Names are UTF-8, Unix modes and modification
        times are kept; ZIP64 is used automatically past 4 GiB or 65 535 entries. The
        archive is written under a temporary name next to OUT.zip and renamed when
        complete, so a failure leaves nothing half-written. An existing OUT.zip is left
        as it was and the command refused (exit 2), unless --force.

          --level N        deflate level, 1 (fastest) to 9 (smallest) (default 6)
          --store          store files without compression
          --force          replace an existing OUT.zip
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--level"], flags: ["--store", "--force"])
        guard arguments.positionals.count >= 2 else {
            throw HaulError.usage("haul zip needs an archive name and at least one file or directory", hint: "haul zip OUT.zip PATH...")
        }
        var options = ZipWriteOptions(replace: arguments.has("--force"))
        if arguments.has("--store") {
            guard arguments.value("--level") == nil else { throw HaulError.usage("--store and --level exclude each other") }
            options.compression = .store
        } else if let level = try arguments.positiveInt("--level") {
            options.compression = .deflate(level: level)
        }
        try PathArguments.parentFolder(of: arguments.positionals[0], role: "OUT.zip")
        for input in arguments.positionals.dropFirst() {
            try PathArguments.existing(input, role: "PATH", hint: "give files or directories that exist")
        }
        let summary = try ZipWriter.create(archive: arguments.positionals[0], inputs: Array(arguments.positionals.dropFirst()), options: options)
        Output.line(
            "\(arguments.positionals[0]): \(summary.entries) entries, \(ByteSize.format(summary.bytes)) in, \(ByteSize.format(summary.archiveBytes)) out")
        return ExitCode.success
    }
}

enum ExtractCommand: Command {
    static let name = "extract"
    static let summary = "extract a zip, tar, tar.gz or gz archive safely"
    static let help = """
        usage: haul extract ARCHIVE DEST [--max-size SIZE] [--max-ratio N] [--max-entries N] [--allow-symlinks]

        Extracts a zip, tar, tar.gz or gz archive (detected from its content, not its
        name) into DEST, which must not exist or must be an empty directory. Everything
        is extracted into a staging directory next to DEST and renamed into place only
        when every entry is complete and verified; on failure DEST is left as it was.
        Unsafe archives are refused as a whole: absolute or '..' names, backslashes,
        duplicate names, overlapping entries (zip bombs), entries inflating past their
        size or declaring more than deflate could give them, encrypted entries,
        unsupported methods, hard links and devices. Nested archives are never
        extracted. Files get 0666 (0777 if executable) less the umask; owners are not
        restored.

          --max-size SIZE    refuse archives that expand past SIZE, e.g. 10GiB (default:
                             1032 times the archive's size, the most deflate expands data);
                             always capped by the free space of DEST's file system less a
                             reserve (5%, at most 1GiB); a sparse file's holes stay holes
                             and do not count
          --max-ratio N      refuse a compressed entry (a zip entry, the gzip stream of a
                             .gz or .tar.gz) past 1MiB that expands more than N times
                             (default: no limit; zeros compress about 1000 times)
          --max-entries N    refuse archives with more than N entries (default 1000000)
          --allow-symlinks   create symlink entries that resolve inside DEST (checked on
                             disk, after everything else); default: refuse them
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--max-size", "--max-ratio", "--max-entries"], flags: ["--allow-symlinks"])
        let paths = try arguments.expect(2, "ARCHIVE and DEST")
        var limits = ExtractionLimits()
        limits.maxSize = try arguments.size("--max-size")
        limits.maxEntries = try arguments.positiveInt("--max-entries") ?? limits.maxEntries
        limits.maxRatio = try arguments.positiveInt("--max-ratio").map(Int64.init)
        try PathArguments.readableFile(paths[0], role: "ARCHIVE", hint: "give the path of a zip, tar, tar.gz or gz file")
        try PathArguments.parentFolder(of: paths[1], role: "DEST")
        let summary = try Extractor.extract(archive: paths[0], to: paths[1], limits: limits, allowSymlinks: arguments.has("--allow-symlinks"))
        Output.line(
            "\(paths[1]): \(summary.files) files, \(summary.directories) directories\(summary.symlinks > 0 ? ", \(summary.symlinks) symlinks" : ""), \(ByteSize.format(summary.bytes)) from a \(summary.format.rawValue) archive"
        )
        return ExitCode.success
    }
}
