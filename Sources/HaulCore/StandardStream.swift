import Foundation
import Synchronization

/// Writes to standard output and standard error with `write(2)`, never trapping: a closed
/// reader (`haul list | head -1`, a log collector gone) is a normal end, not a crash.
public enum StandardStream {
    private static let closed = Mutex<Set<Int32>>([])

    /// Writes all of `text` to `descriptor` (1 or 2), retrying short writes and `EINTR`.
    /// - Returns: `false` once the reader is gone (`EPIPE` or another error); later writes to
    ///   that descriptor are dropped.
    @discardableResult
    public static func write(_ text: String, to descriptor: Int32) -> Bool {
        if closed.withLock({ $0.contains(descriptor) }) { return false }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                closed.withLock { _ = $0.insert(descriptor) }
                return false
            }
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    /// Whether a write to `descriptor` has found its reader gone.
    public static func isClosed(_ descriptor: Int32) -> Bool {
        closed.withLock { $0.contains(descriptor) }
    }

    /// Makes a closed pipe an `EPIPE` error rather than a fatal `SIGPIPE`, for the whole process.
    public static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }
}
