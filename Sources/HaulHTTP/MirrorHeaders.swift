import Foundation
import HaulCore

/// RFC 6249 (Metalink/HTTP): the mirrors an origin names in `Link: <URL>; rel=duplicate`
/// headers, and the digest in its `Digest:` header (RFC 3230). Pure.
public enum MirrorHeaders {
    /// The most duplicates taken from one response.
    public static let maxDuplicates = 20

    /// The http(s) URLs of `link`'s `rel=duplicate` entries, relative ones resolved against
    /// `base`, by their `pri` (lower first; none last), without repeats or `base` itself.
    public static func duplicates(_ link: String?, base: String) -> [String] {
        guard let link else { return [] }
        var found: [(url: String, priority: Int, order: Int)] = []
        for (order, entry) in entries(link).enumerated() {
            guard let (target, parameters) = parse(entry), parameters["rel"]?.lowercased().split(separator: " ").contains("duplicate") == true,
                let resolved = Origin.resolve(target, against: base), let url = try? OriginURL.validate(resolved), url != base,
                !found.contains(where: { $0.url == url })
            else { continue }
            found.append((url, parameters["pri"].flatMap { Int($0) } ?? 999_999, order))
        }
        return found.sorted { ($0.priority, $0.order) < ($1.priority, $1.order) }.prefix(maxDuplicates).map(\.url)
    }

    /// The strongest digest of `digest` Haul verifies (`SHA-512`, `SHA-256`, `SHA` (sha1) or
    /// `MD5`, base64 as RFC 3230 writes them), or `nil`.
    public static func digest(_ digest: String?) -> Checksum? {
        guard let digest else { return nil }
        let names: [(String, Checksum.Algorithm)] = [("sha-512", .sha512), ("sha-256", .sha256), ("sha", .sha1), ("md5", .md5)]
        var given: [Checksum.Algorithm: Checksum] = [:]
        for item in digest.split(separator: ",") {
            guard let equals = item.firstIndex(of: "=") else { continue }
            let name = item[..<equals].trimmingWhitespace().lowercased()
            guard let algorithm = names.first(where: { $0.0 == name })?.1,
                let bytes = Data(base64Encoded: String(item[item.index(after: equals)...].trimmingWhitespace())), bytes.count == algorithm.byteCount
            else { continue }
            given[algorithm] = Checksum(algorithm: algorithm, hex: ASCIIBytes.hex(Array(bytes)))
        }
        return names.lazy.compactMap { given[$0.1] }.first
    }

    /// `link`'s comma-separated entries; a comma inside `<…>` or quotes does not separate.
    private static func entries(_ link: String) -> [Substring] {
        var result: [Substring] = []
        var start = link.startIndex
        var angled = false
        var quoted = false
        for index in link.indices {
            switch link[index] {
            case "<" where !quoted: angled = true
            case ">" where !quoted: angled = false
            case "\"" where !angled: quoted.toggle()
            case "," where !angled && !quoted:
                result.append(link[start..<index])
                start = link.index(after: index)
            default: break
            }
        }
        result.append(link[start...])
        return result
    }

    /// `<target>; name=value; …`: the target and the parameters (names lowercased, quotes removed).
    private static func parse(_ entry: Substring) -> (String, [String: String])? {
        let trimmed = entry.trimmingWhitespace()
        guard trimmed.hasPrefix("<"), let close = trimmed.firstIndex(of: ">") else { return nil }
        let target = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
        var parameters: [String: String] = [:]
        for parameter in trimmed[trimmed.index(after: close)...].split(separator: ";") {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let value = parameter[parameter.index(after: equals)...].trimmingWhitespace()
            parameters[parameter[..<equals].trimmingWhitespace().lowercased()] = value.trimmingCharacters(in: ["\""])
        }
        return (target, parameters)
    }
}
