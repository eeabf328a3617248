import Glibc
import HaulCore

/// One thing to put in a zip, found on disk.
struct WriteEntry: Sendable {
    enum Kind: Sendable, Equatable {
        case file, directory
        case symlink(target: String)
    }

    /// The entry name; directories end with `/`.
    var name: String
    var source: String
    var kind: Kind
    var mode: UInt32
    var modificationTime: Int64
    var size: Int64
}

/// A file's device and inode, which identify it whatever path reaches it.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// Turns `haul zip` arguments into entries: a directory adds its contents relative to itself (empty
/// directories kept), a file adds itself by its base name, symlinks inside a tree are stored as symlinks.
enum InputWalker {
    /// Collects entries in a stable order (arguments in order, names sorted bytewise within a directory).
    /// - Parameter skipping: the archive being written (and any old one it replaces), so it never adds itself.
    static func collect(_ inputs: [String], skipping: [FileIdentity]) throws -> [WriteEntry] {
        var entries: [WriteEntry] = []
        for input in inputs {
            var info = stat()
            guard stat(input, &info) == 0 else { throw HaulError.archiveIO("read", input, errno: errno) }
            let trimmed = input.trimmingTrailingSlashes
            if info.st_mode & S_IFMT == S_IFDIR {
                try walk(trimmed, prefix: "", into: &entries, skipping: skipping)
            } else {
                let base = String(trimmed.lastSlashComponent ?? Substring(trimmed))
                if let entry = try entry(path: input, name: base, info: info, skipping: skipping) { entries.append(entry) }
            }
        }
        var seen = Set<String>()
        for entry in entries where !seen.insert(entry.name).inserted {
            throw HaulError(
                HaulError.Code.duplicateEntry, "two inputs would both be stored as '\(entry.name)'",
                hint: "put the files in one directory and add that directory instead")
        }
        return entries
    }

    private static func walk(_ directory: String, prefix: String, into entries: inout [WriteEntry], skipping: [FileIdentity]) throws {
        let names = try Staging.listDirectory(directory).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        for name in names {
            let path = "\(directory)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0 else { throw HaulError.archiveIO("read", path, errno: errno) }
            guard let entry = try entry(path: path, name: prefix + name, info: info, skipping: skipping) else { continue }
            entries.append(entry)
            if entry.kind == .directory { try walk(path, prefix: entry.name, into: &entries, skipping: skipping) }
        }
    }

    private static func entry(path: String, name: String, info: stat, skipping: [FileIdentity]) throws -> WriteEntry? {
        if skipping.contains(FileIdentity(info)) { return nil }
        let mtime = Int64(info.st_mtim.tv_sec)
        let mode = UInt32(info.st_mode)
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            return WriteEntry(name: name, source: path, kind: .file, mode: mode, modificationTime: mtime, size: Int64(info.st_size))
        case S_IFDIR:
            return WriteEntry(name: name + "/", source: path, kind: .directory, mode: mode, modificationTime: mtime, size: 0)
        case S_IFLNK:
            var buffer = [CChar](repeating: 0, count: 4097)
            let count = readlink(path, &buffer, 4096)
            guard count >= 0 else { throw HaulError.archiveIO("read the symlink", path, errno: errno) }
            let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return WriteEntry(name: name, source: path, kind: .symlink(target: target), mode: mode, modificationTime: mtime, size: Int64(count))
        default:
            throw HaulError(HaulError.Code.unsupportedEntry, "'\(path)' is a device, FIFO or socket, which a zip cannot hold")
        }
    }
}
