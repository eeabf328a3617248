import Foundation

/// The little XML S3 answers with, read by tag. Replies are small, flat documents of known
/// shape, so a tag scanner is enough and keeps the module free of an XML dependency.
public enum S3XML {
    /// The text of every `<tag>…</tag>` in `xml`, in order, entities decoded.
    public static func values(_ tag: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = Substring(xml)
        let open = "<\(tag)>", close = "</\(tag)>"
        while let start = rest.range(of: open), let end = rest[start.upperBound...].range(of: close) {
            found.append(decode(String(rest[start.upperBound..<end.lowerBound])))
            rest = rest[end.upperBound...]
        }
        return found
    }

    /// The first `<tag>` value.
    public static func value(_ tag: String, in xml: String) -> String? { values(tag, in: xml).first }

    /// The blocks `<tag>…</tag>` (inner text, undecoded) for reading repeated records.
    public static func blocks(_ tag: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = Substring(xml)
        while let start = rest.range(of: "<\(tag)>"), let end = rest[start.upperBound...].range(of: "</\(tag)>") {
            found.append(String(rest[start.upperBound..<end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        return found
    }

    /// `&lt;` and friends back to characters.
    public static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&#34;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// Characters to entities, for the documents Haul sends.
    public static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The `CompleteMultipartUpload` body for `parts` (part number, ETag), sorted by number.
    public static func completion(_ parts: [(number: Int, etag: String)]) -> String {
        let items = parts.sorted { $0.number < $1.number }.map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(escape($0.etag))</ETag></Part>" }
        return "<CompleteMultipartUpload>" + items.joined() + "</CompleteMultipartUpload>"
    }

    /// One multipart upload in a `ListMultipartUploads` answer.
    public struct Upload: Sendable, Equatable {
        public let key: String
        public let uploadID: String
        /// `Initiated`, ISO 8601.
        public let initiated: String
    }

    /// The uploads of a `ListMultipartUploads` answer, and the markers of the next page if it is truncated.
    public static func uploads(_ xml: String) -> (uploads: [Upload], nextKey: String?, nextUploadID: String?) {
        let uploads = blocks("Upload", in: xml).compactMap { block -> Upload? in
            guard let key = value("Key", in: block), let id = value("UploadId", in: block) else { return nil }
            return Upload(key: key, uploadID: id, initiated: value("Initiated", in: block) ?? "")
        }
        guard value("IsTruncated", in: xml) == "true" else { return (uploads, nil, nil) }
        return (uploads, value("NextKeyMarker", in: xml), value("NextUploadIdMarker", in: xml))
    }
}
