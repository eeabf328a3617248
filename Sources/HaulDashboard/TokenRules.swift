import Glibc

/// What makes an operator token, or the file that holds it, too weak to serve with: checked
/// once when `haul dashboard` starts, so that a guessable token or one another user could
/// rewrite never guards the fleet's controls.
public enum TokenRules {
    /// Fewest characters a token may have: 16 random characters are out of reach of guessing
    /// even before the login throttle (`LoginThrottle`) slows it.
    public static let minimumLength = 16

    /// Why `token` is refused (from `source`, such as `HAUL_DASHBOARD_TOKEN`), or nil.
    public static func tokenProblem(_ token: String, source: String) -> String? {
        guard token.count < minimumLength else { return nil }
        return "the dashboard token in \(source) has \(token.count) character\(token.count == 1 ? "" : "s"), fewer than \(minimumLength); "
            + "use a long random one, such as the output of 'openssl rand -hex 24'"
    }

    /// Who owns a file or folder and its permission bits, as `stat` tells.
    public struct Owner: Sendable, Equatable {
        public var uid: UInt32
        public var mode: UInt32
        public init(uid: UInt32, mode: UInt32) {
            self.uid = uid
            self.mode = mode
        }
    }

    /// Why the token file `path` (described by `file`, in a folder described by `folder`) is
    /// refused for a process running as `user`, or nil: anyone but `user` and root who can
    /// write it, or replace it in its folder, could choose the token.
    public static func fileProblem(_ path: String, file: Owner, folder: Owner, folderPath: String, user: UInt32) -> String? {
        let trusted: Set<UInt32> = [0, user]
        let fix = "chmod 600 '\(path)', owned by the user that runs the dashboard, in a folder only that user can write"
        if !trusted.contains(file.uid) {
            return "--token-file '\(path)' belongs to user \(file.uid), who could change the token; \(fix)"
        }
        if file.mode & 0o022 != 0 {
            return "--token-file '\(path)' can be written by other users (mode \(octal(file.mode))); \(fix)"
        }
        if !trusted.contains(folder.uid) {
            return "--token-file '\(path)' is in folder '\(folderPath)' of user \(folder.uid), who could replace it; \(fix)"
        }
        if folder.mode & 0o022 != 0 && folder.mode & 0o1000 == 0 {
            return
                "--token-file '\(path)' is in folder '\(folderPath)' that other users can write (mode \(octal(folder.mode))), so they could replace it; \(fix)"
        }
        return nil
    }

    /// Reads the owners of `path` and of its folder and applies `fileProblem`; nil when fine
    /// or when `stat` fails (reading the file then says what is wrong).
    public static func checkFile(_ path: String) -> String? {
        let slash = path.lastIndex(of: "/")
        let folderPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard let file = owner(path), let folder = owner(folderPath) else { return nil }
        return fileProblem(path, file: file, folder: folder, folderPath: folderPath, user: geteuid())
    }

    private static func owner(_ path: String) -> Owner? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Owner(uid: info.st_uid, mode: info.st_mode & 0o7777)
    }

    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
