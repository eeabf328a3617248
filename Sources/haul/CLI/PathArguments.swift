import Glibc
import HaulCore
import HaulStorage

/// Checks of the paths a command is given, made before any work: a mistyped or wrong path is a
/// bad argument (exit status 2, one line naming it and what to give instead), not a failure
/// found halfway. The work checks again as it opens them, since a path can change meanwhile.
enum PathArguments {
    /// `path` names a regular file (a link to one counts) that this process can read; `role`
    /// is what the message calls it (`"ARCHIVE"`), `hint` what to give instead.
    static func readableFile(_ path: String, role: String, hint: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw HaulError.usage("cannot read \(role) '\(path)': \(reason(errno))", hint: hint) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw HaulError.usage("\(role) '\(path)' is \(kind(info.st_mode)), not a file", hint: hint)
        }
        guard faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0 else {
            throw HaulError.usage("cannot read \(role) '\(path)': \(reason(errno))", hint: hint)
        }
    }

    /// `path` names a file or a directory (a link is followed).
    static func existing(_ path: String, role: String, hint: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw HaulError.usage("cannot read \(role) '\(path)': \(reason(errno))", hint: hint) }
    }

    /// The folder that is to hold `path` (a file or directory the command creates) exists and
    /// is a directory.
    static func parentFolder(of path: String, role: String) throws {
        let folder = folder(of: path)
        var info = stat()
        let hint = "create the folder first, or give \(role) in an existing one"
        guard stat(folder, &info) == 0 else { throw HaulError.usage("cannot create \(role) '\(path)': the folder '\(folder)' \(missing(errno))", hint: hint) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw HaulError.usage("cannot create \(role) '\(path)': '\(folder)' is \(kind(info.st_mode)), not a folder", hint: hint)
        }
    }

    /// The folder holding `path`, which may end in `/` (`DEST/`).
    static func folder(of path: String) -> String {
        path.trimmingTrailingSlashes.parentFolder
    }

    /// What a file of `mode` is, with its article ("a directory").
    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a file"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a named pipe"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }

    private static func missing(_ code: Int32) -> String {
        code == ENOENT ? "does not exist" : "cannot be used: \(reason(code))"
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
