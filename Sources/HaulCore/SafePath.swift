/// Validation of destination paths, which are always relative to a storage root. Pure.
public enum SafePath {
    /// Normalises a relative destination (`a//b/./c` → `a/b/c`) and refuses anything that could
    /// leave the storage root: absolute paths, `..`, NUL, backslashes, empty names.
    public static func validate(_ path: String, what: String = "--dest") throws -> String {
        guard !path.isEmpty else {
            throw HaulError.usage("\(what) is empty", hint: "give a path relative to the storage root, such as isos/debian.iso")
        }
        guard !path.startsWithSlash else {
            throw HaulError.usage(
                "\(what) '\(path)' is absolute, but destinations are relative to the storage root",
                hint: "drop the leading '/', or change the root with --storage")
        }
        guard !path.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\\") }) else {
            throw HaulError.usage("\(what) '\(path)' contains a NUL or backslash", hint: "use '/' to separate directories")
        }
        // Compared by bytes: no other text is canonically equivalent to `.` or `..`, and
        // `Character` comparisons cost a manifest of 100 000 lines a tenth of its time.
        let parts = path.slashComponents().filter { !$0.sameBytes(as: ".") }
        guard !parts.contains(where: { $0.sameBytes(as: "..") }) else {
            throw HaulError.usage("\(what) '\(path)' climbs out with '..', which would leave the storage root", hint: "give a path inside the storage root")
        }
        guard !parts.isEmpty, !path.endsWithSlash else {
            throw HaulError.usage("\(what) '\(path)' names a directory, not a file", hint: "end it with a file name")
        }
        return parts.joined(separator: "/")
    }

    /// `validate` for a destination a transfer will write (from the user or the origin), also
    /// refusing control and direction characters (see `SafeText`), which would drive the
    /// terminals that list the file, and the names Haul keeps for what it is still writing: a
    /// component ending in `.haul-partial` (or `.haul-partial.N`) or `.haul-parts`. Such a file
    /// would take the place of another transfer's partial file or part folder mid-download.
    public static func validateDestination(_ path: String, what: String = "--dest") throws -> String {
        let clean = try validate(path, what: what)
        if let unsafe = path.unicodeScalars.first(where: SafeText.isUnsafe) {
            throw HaulError.usage(
                "\(what) '\(SafeText.cleanLine(path))' contains the control or direction character U+\(format4(unsafe.value))",
                hint: "choose a name without control characters (they would drive the terminals that list it)")
        }
        if let reserved = clean.slashComponents().first(where: isReserved) {
            throw HaulError.usage(
                "\(what) '\(path)' has '\(reserved)', a name Haul keeps for the files of downloads in progress",
                hint: "choose a name that does not end in .haul-partial or .haul-parts")
        }
        return clean
    }

    /// `value` in upper-case hex, at least four digits (`001B`).
    private static func format4(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Whether a path component is a name of Haul's temporaries (`x.haul-partial`,
    /// `x.haul-partial.3`, `x.haul-parts`), judged by its bytes as the file system names them:
    /// as `Character`s, `x\u{600}.haul-partial` does not end with `.haul-partial` (U+0600 joins
    /// the `.` after it into one `Character`), yet it is the partial file of `x\u{600}`.
    static func isReserved(_ component: Substring) -> Bool {
        if component.endsWithBytes(of: ".haul-parts") || component.endsWithBytes(of: ".haul-partial") { return true }
        guard let dot = component.unicodeScalars.lastIndex(of: ".") else { return false }
        let generation = component.unicodeScalars[component.unicodeScalars.index(after: dot)...]
        return !generation.isEmpty && generation.allSatisfy { ("0"..."9").contains($0) }
            && Substring(component.unicodeScalars[..<dot]).endsWithBytes(of: ".haul-partial")
    }
}
