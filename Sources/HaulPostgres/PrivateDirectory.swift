import Foundation
import HaulCore

/// Directories and files of the embedded cluster that must belong to one user alone.
///
/// Nothing here ever changes the owner or mode of something that already existed: a directory that
/// is missing is created (and, as root, given to the server's user while it is still empty); one that
/// exists must already be a real directory (not a symlink) of the right owner and with no loose mode
/// bits, or the embedded server refuses to start.
enum PrivateDirectory {
    /// A user's numeric identity.
    struct Account {
        let name: String
        let uid: uid_t
        let gid: gid_t
    }

    /// `user` from the password database; `nil` means this process's effective user.
    static func account(_ user: String?) throws -> Account {
        let entry = user.map { getpwnam($0) } ?? getpwuid(geteuid())
        guard let entry else {
            throw HaulError(
                .embeddedPostgres, "cannot look up the user \(user.map { "'\($0)'" } ?? "with id \(geteuid())") in the password database",
                hint: "the embedded PostgreSQL needs a named user (install the 'postgresql' package as root), or set DATABASE_URL")
        }
        return Account(name: String(cString: entry.pointee.pw_name), uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// Makes sure `path` is a directory of `owner` that no one else can write to (`forbidden` bits unset),
    /// creating it with `mode` (and giving it to `owner`) when it is missing.
    /// - Parameter followLinks: whether `path` itself may be a symlink (`HAUL_HOME` may; the cluster's own
    ///   directories may not).
    static func ensure(_ path: String, owner: Account, mode: mode_t, forbidden: mode_t, followLinks: Bool, what: String) throws {
        if mkdir(path, mode) == 0 {
            // Just created, so still empty and ours: give it its owner and exact mode (mkdir applied the umask).
            let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw failure("open", path, errno) }
            defer { close(fd) }
            guard fchmod(fd, mode) == 0 else { throw failure("set the mode of", path, errno) }
            if owner.uid != geteuid(), fchown(fd, owner.uid, owner.gid) != 0 { throw failure("give \(owner.name)", path, errno) }
            return
        }
        guard errno == EEXIST else { throw failure("create", path, errno) }
        try check(path, owner: owner, forbidden: forbidden, followLinks: followLinks, what: what)
    }

    /// Refuses `path` unless it is a real directory owned by `owner` with none of the `forbidden` mode bits.
    static func check(_ path: String, owner: Account, forbidden: mode_t, followLinks: Bool, what: String) throws {
        var info = stat()
        guard (followLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { throw failure("inspect", path, errno) }
        let hint = "remove it or fix its owner and mode (chmod go-w, or 0700 for the cluster's own folders), or point HAUL_HOME elsewhere"
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw HaulError(
                .embeddedPostgresUnsafe, "refusing to start the embedded PostgreSQL: \(what) \(path) is not a directory (or is a symlink)", hint: hint)
        }
        guard info.st_uid == owner.uid else {
            let other = getpwuid(info.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(info.st_uid)"
            throw HaulError(
                .embeddedPostgresUnsafe, "refusing to start the embedded PostgreSQL: \(what) \(path) belongs to \(other), not \(owner.name)", hint: hint)
        }
        guard info.st_mode & forbidden == 0 else {
            throw HaulError(
                .embeddedPostgresUnsafe,
                "refusing to start the embedded PostgreSQL: \(what) \(path) has mode \(String(info.st_mode & 0o7777, radix: 8)), open to other users",
                hint: hint)
        }
    }

    /// Replaces `path` with `text`, readable by `owner` alone (a fresh file renamed into place, never
    /// written through an existing name or a symlink).
    static func writeFile(_ path: String, _ text: String, owner: Account) throws {
        let temporary = path + ".haul-new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("create", temporary, errno) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let owned = owner.uid == geteuid() || fchown(fd, owner.uid, owner.gid) == 0
        close(fd)
        guard written == bytes.count, owned, rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw failure("write", path, code)
        }
    }

    private static func failure(_ doing: String, _ path: String, _ code: Int32) -> HaulError {
        HaulError(
            .embeddedPostgres, "cannot \(doing) \(path) for the embedded PostgreSQL: \(String(cString: strerror(code)))",
            hint: "check HAUL_HOME, or set DATABASE_URL to use another server")
    }
}
