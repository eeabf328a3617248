import Foundation

/// A batch keeps each file it writes open until it publishes them all (`UnnamedFile`, or a
/// locked `PartialFile`), and each folder it writes into (`OpenedRoot`), so a worker may hold
/// many more files open than connections. It raises its soft limit on open files to the hard
/// limit, as Go's runtime does for every program, and bounds its batches by what it got.
enum OpenFileLimit {
    /// Raises the soft limit on open files to the hard limit (at most 2^20, the kernel's usual
    /// `nr_open`). - Returns: the soft limit now.
    static func raise() -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        let wanted = min(limit.rlim_max, 1 << 20)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// The most files one batch takes when each of `lanes` lanes may run a batch at once and
    /// `openFiles` descriptors may be open: `requested`, unless the lanes' batches would hold
    /// more than three quarters of them (the rest is for connections, the database and the
    /// storage), at two a file (the file, and its folder when every file has a folder of its
    /// own); never fewer than 16 a batch.
    static func batchLimit(requested: Int, lanes: Int, openFiles: Int) -> Int {
        min(requested, max(16, openFiles * 3 / 4 / 2 / max(lanes, 1)))
    }
}
