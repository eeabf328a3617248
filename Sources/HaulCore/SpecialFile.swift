import Foundation

/// Device nodes, FIFOs and sockets: names a file Haul writes (a download, a zip archive) is never
/// renamed over. `-o /dev/null` is a curl habit; a file published there would replace the device
/// with a regular file (as root, every program's `/dev/null`).
public enum SpecialFile {
    /// What is at `path` when it is a device, a FIFO or a socket (a symlink is not followed):
    /// "a character device", "a block device", "a FIFO", "a socket"; `nil` for anything else or
    /// nothing at all.
    public static func kind(at path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        default: return nil
        }
    }

    /// - Throws: `destination-exists` when `path` is a device, a FIFO or a socket, `--force` or
    ///   not, with `hint` (what to give instead).
    public static func refuse(_ path: String, hint: String) throws {
        guard let kind = kind(at: path) else { return }
        throw HaulError(.destinationExists, "'\(path)' is \(kind), not a file; haul never replaces one", hint: hint)
    }

    /// What a download refused so should be given instead.
    public static let downloadHint = "give -o a file or folder path; to throw the bytes away, use -o - > /dev/null"
}
