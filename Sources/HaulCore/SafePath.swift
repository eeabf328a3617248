/// Validation of destination paths, which are always relative to a storage root. Pure.
public enum SafePath {
    /// Normalises a relative destination (`a//b/./c` → `a/b/c`) and refuses anything that could
    /// leave the storage root: absolute paths, `..`, NUL, backslashes, empty names.
    public static func validate(_ path: String, what: String = "--dest") throws -> String {
        guard !path.isEmpty else {
            throw HaulError.usage("\(what) is empty", hint: "give a path relative to the storage root, such as isos/debian.iso")
        }
        guard !path.hasPrefix("/") else {
            throw HaulError.usage(
                "\(what) '\(path)' is absolute, but destinations are relative to the storage root",
                hint: "drop the leading '/', or change the root with --storage")
        }
        guard !path.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\\") }) else {
            throw HaulError.usage("\(what) '\(path)' contains a NUL or backslash", hint: "use '/' to separate directories")
        }
        let parts = path.split(separator: "/").filter { $0 != "." }
        guard !parts.contains("..") else {
            throw HaulError.usage("\(what) '\(path)' climbs out with '..', which would leave the storage root", hint: "give a path inside the storage root")
        }
        guard !parts.isEmpty, !path.hasSuffix("/") else {
            throw HaulError.usage("\(what) '\(path)' names a directory, not a file", hint: "end it with a file name")
        }
        return parts.joined(separator: "/")
    }
}
