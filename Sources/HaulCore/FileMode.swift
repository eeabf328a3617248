import Glibc

/// File modes that honour the process's umask, as `cp`, `tar` and `curl` do.
public enum FileMode {
    /// The process's umask, read once from `/proc/self/status` (setting and restoring it with `umask(2)`
    /// would race with other threads creating files); `022` where that line is missing.
    public static let umask: mode_t = {
        guard let file = fopen("/proc/self/status", "r") else { return 0o022 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("Umask:"), let value = mode_t(text.dropFirst(6).trimmingWhitespace(), radix: 8) { return value }
        }
        return 0o022
    }()

    /// The mode of a new regular file: `0666` (or `0777` when executable) less the umask.
    public static func file(executable: Bool = false) -> mode_t {
        (executable ? 0o777 : 0o666) & ~umask
    }

    /// The mode of a new directory: `0777` less the umask.
    public static var directory: mode_t { 0o777 & ~umask }
}
