import CLinux
import Foundation
import HaulCore

/// Which URL a published file was downloaded from, kept on the file itself: an extended
/// attribute, `user.haul.source`, holding the SHA-256 of the URL (never the URL, which may carry
/// credentials or a signed token).
///
/// The transfer history says the same while it lasts, but `haul prune` and the retention delete
/// it. With the mark, a `haul get` run again, or a re-mirror of a URL the origin names, still
/// knows the file as its own older copy and replaces it, where the history alone would call it
/// a stranger's and refuse. A file system without user extended attributes (NFSv3, some FUSE
/// mounts) keeps no mark, and the history alone decides, as before.
///
/// A partial file carries the mark of the URL it is downloaded from from the moment it is made,
/// so a download that resumes can tell whether a download of another URL wrote it meanwhile,
/// also one recorded in another database, which no history shows (`TransferFiles.confirmPartial`).
///
/// A mark is honoured only on a regular file that is not a symlink, and only for its own URL: it
/// lets Haul replace what it wrote, never what it did not. Setting it needs write permission on
/// the file, which is enough to destroy the file anyway.
///
/// A published file is also sealed: a second attribute, `user.haul.sealed`, holds its
/// modification time as Haul left it. A file written since (edited in place, or copied over,
/// which keeps the attributes of the file it overwrites) has another time, so an incremental
/// re-mirror does not take it for the origin's unchanged version (`changedSinceSealed`).
public enum SourceMark {
    /// The attribute's name.
    static let attribute = "user.haul.source"
    /// The name of the attribute that holds a published file's modification time (`seal`).
    static let sealAttribute = "user.haul.sealed"

    /// What the mark holds for `url`: its SHA-256, in hex (on S3, the object's metadata holds
    /// the same: `ObjectSourceMark`).
    public static func value(for url: String) -> String {
        let digester = Digester(.sha256)
        var url = url
        url.withUTF8 { digester.update(UnsafeRawBufferPointer($0)) }
        return digester.finish().hex
    }

    /// Marks the open file `fd` as downloaded from `url`. A file system that keeps no such
    /// attributes is not an error: the mark is a help, the history remains.
    public static func write(_ fd: Int32, url: String) {
        let value = Array(value(for: url).utf8)
        _ = value.withUnsafeBytes { fsetxattr(fd, attribute, $0.baseAddress, $0.count, 0) }
    }

    /// What a file's mark says of a URL.
    public enum Reading: Sendable, Equatable {
        /// The file carries the URL's mark.
        case thisURL
        /// The file carries the mark of another URL.
        case anotherURL
        /// The file carries no mark, though its file system keeps them: Haul did not write it
        /// (or an older Haul, before files were marked). A symlink or a folder reads so too.
        case unmarked
        /// The file system keeps no user attributes: the mark cannot tell.
        case unsupported
    }

    /// What the mark of the regular file at `path` (a symlink is not followed, and never
    /// counts) says of `url`.
    public static func read(_ path: String, against url: String) -> Reading {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return .unmarked }
        let expected = Array(value(for: url).utf8)
        var found = [UInt8](repeating: 0, count: expected.count + 1)
        let count = found.withUnsafeMutableBytes { lgetxattr(path, attribute, $0.baseAddress, $0.count) }
        if count >= 0 { return Array(found.prefix(count)) == expected ? .thisURL : .anotherURL }
        switch errno {
        case ERANGE: return .anotherURL
        case ENOTSUP: return .unsupported
        default: return .unmarked
        }
    }

    /// Records the open file `fd`'s modification time, once its last byte is written (as it is
    /// published). Like the mark, a help: a file system that keeps no attributes records nothing.
    public static func seal(_ fd: Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        let value = Array(stamp(info).utf8)
        _ = value.withUnsafeBytes { fsetxattr(fd, sealAttribute, $0.baseAddress, $0.count, 0) }
    }

    /// Whether the regular file at `path` was written since Haul sealed it: its modification time
    /// is not the one recorded (`touch` counts too). A file with no seal (a file system that
    /// keeps no attributes, a file published by an older Haul) counts as unchanged: nothing tells.
    public static func changedSinceSealed(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        var found = [UInt8](repeating: 0, count: 64)
        let count = found.withUnsafeMutableBytes { lgetxattr(path, sealAttribute, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        return Array(found.prefix(count)) != Array(stamp(info).utf8)
    }

    /// A modification time as the seal holds it: seconds and nanoseconds.
    private static func stamp(_ info: stat) -> String {
        "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }
}
