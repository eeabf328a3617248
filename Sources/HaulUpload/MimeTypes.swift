import Foundation

/// The system's extension → media type table (`/etc/mime.types`, Debian package `media-types`).
///
/// Lookup is case-insensitive and takes the longest matching suffix of dot-separated
/// extensions, so `x.tar.gz` matches a `tar.gz` entry when there is one and `gz` otherwise.
public struct MimeTypes: Sendable {
    /// The type sent when nothing matches.
    public static let fallback = "application/octet-stream"

    private let byExtension: [String: String]

    /// Loads the table at `path`; a missing or unreadable file gives an empty table, so every
    /// lookup answers ``fallback``.
    public init(path: String = "/etc/mime.types") {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        self.init(contents: text)
    }

    /// Parses a table in `mime.types` format: `type ext1 ext2 ...` per line, `#` starts a comment.
    public init(contents: String) {
        var table: [String: String] = [:]
        for line in contents.split(whereSeparator: \.isNewline) {
            let words = line.prefix { $0 != "#" }.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let type = words.first, type.containsSlash else { continue }
            for ext in words.dropFirst() where table[ext.lowercased()] == nil {
                table[ext.lowercased()] = String(type)
            }
        }
        byExtension = table
    }

    /// The media type for a file name (a path is fine: only its last component counts).
    public func type(forFilename filename: String) -> String {
        let base = filename.lastSlashComponent.map(String.init) ?? ""
        let pieces = base.lowercased().split(separator: ".", omittingEmptySubsequences: false)
        // The first piece is the stem; a dot file has an empty one, so `.png` counts as a PNG, as in curl.
        for start in pieces.indices.dropFirst() {
            let suffix = pieces[start...].joined(separator: ".")
            if let type = byExtension[suffix] { return type }
        }
        return Self.fallback
    }
}
