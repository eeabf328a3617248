import Foundation
import HaulCore

/// Request headers read from a file (`--header @FILE`, as curl's `-H @FILE`), so that a secret
/// such as `Authorization: Bearer …` is not on the command line, where every local user sees
/// it in `ps` for as long as the command runs.
public enum HeaderFile {
    /// The header lines of a file's `text`: one `Name: value` a line (CRLF or LF), blank lines
    /// and lines starting with `#` skipped. A line that is not a header is refused by its
    /// number, never shown (it may hold a secret).
    /// - Parameter source: how messages name the file, e.g. `--header @secrets.txt`.
    public static func parse(_ text: String, source: String) throws -> [Header] {
        var headers: [Header] = []
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingWhitespace()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            do {
                headers.append(try Header.parse(line))
            } catch {
                throw HaulError.usage(
                    "\(source): line \(index + 1) is not a header", hint: "write one 'Name: value' a line; blank lines and # comments are skipped")
            }
        }
        return headers
    }

    /// The headers `values` stand for, in order: `@FILE` is the file's headers (read with
    /// `read`), anything else one header line; `flag` names the option in messages.
    public static func expand(_ values: [String], flag: String = "--header", read: (String) -> String?) throws -> [Header] {
        try values.flatMap { value -> [Header] in
            guard value.hasPrefix("@") else { return [try Header.parse(value)] }
            let path = String(value.dropFirst())
            guard !path.isEmpty, let text = read(path) else {
                throw HaulError.usage("cannot read \(flag) \(value)", hint: "give a readable file with one 'Name: value' a line")
            }
            return try parse(text, source: "\(flag) \(value)")
        }
    }

    /// The text of the file at `path`, or `nil` when it cannot be read.
    public static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
}
