import CLinux
import Foundation

/// Whether a file lives in memory (tmpfs), where reserving its blocks up front costs more than it buys.
public enum MemoryFileSystem {
    /// `TMPFS_MAGIC` from `linux/magic.h`: `/dev/shm`, `/tmp` on many systems, `/run`.
    static let tmpfsMagic = 0x0102_1994

    /// Whether the open file `fd` is on tmpfs. `posix_fallocate` there allocates every page of
    /// the file before its first byte arrives (about 0.2 s of CPU per GiB, on the planner's
    /// path, before any segment but the first can start) and buys no layout: memory is not
    /// fragmented the way a disk is, and the planner already checked the free space.
    public static func contains(_ fd: Int32) -> Bool {
        haul_file_system_type(fd) == tmpfsMagic
    }
}
