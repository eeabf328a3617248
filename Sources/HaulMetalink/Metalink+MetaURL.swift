import HaulCore

extension Metalink {
    /// The most `<metaurl mediatype="metalink">`s one document may have followed.
    public static let maxMetaurls = 16

    /// A `<metaurl mediatype="metalink">`: another Metalink whose mirrors of the file count as
    /// this file's, at the metaurl's priority. Torrent metaurls are left out.
    public struct MetaURL: Sendable, Equatable {
        /// An http or https URL.
        public let url: String
        /// The priority its mirrors take.
        public let priority: Int
        /// The file it describes within that Metalink (`name`), when not this file's own name.
        public let name: String?
    }

    /// The metalink metaurls `nodes` give, checked like URLs; others (torrents) left out.
    static func metaurlsOf(_ nodes: [XMLNode], of shown: String) throws -> [MetaURL] {
        try nodes.filter { $0.attributes["mediatype"]?.lowercased() == "metalink" }.map { node in
            MetaURL(url: try OriginURL.validate(node.text.trimmingWhitespace()), priority: priority(node), name: node.attributes["name"])
        }
    }

    /// This document with each file's metaurls followed: `fetch` reads the Metalink at a URL
    /// (bounded at `maxBytes`), which is held to every rule of this one; of its files, the one of
    /// the metaurl's `name` (or this file's name, or its only file) gives its mirrors, at the
    /// metaurl's priority. Its own metaurls are not followed: one level only. Refused, with the
    /// reason: more than `maxMetaurls`, a Metalink without that file or with another size for
    /// it, more than `maxMirrors` mirrors in all, none at all.
    public func following(_ fetch: (String) throws -> [UInt8]) throws -> Metalink {
        let count = files.reduce(0) { $0 + $1.metaurls.count }
        guard count <= Self.maxMetaurls else {
            throw HaulError.usage(
                "the Metalink names \(count) other Metalinks (<metaurl>), more than the \(Self.maxMetaurls) Haul follows",
                hint: "list the mirrors as <url>s")
        }
        guard count > 0 else { return self }
        return Metalink(files: try files.map { try $0.following(fetch) })
    }
}

extension Metalink.File {
    /// This file with its metaurls' mirrors added (see `Metalink.following`).
    func following(_ fetch: (String) throws -> [UInt8]) throws -> Metalink.File {
        let shown = SafeText.cleanLine(name)
        var mirrors = self.mirrors
        for metaurl in metaurls {
            let source = "the Metalink at \(SafeText.cleanLine(Redaction.url(metaurl.url))) (a <metaurl> of '\(shown)')"
            let nested: Metalink
            do {
                nested = try Metalink(parsing: try fetch(metaurl.url))
            } catch let error as HaulError {
                throw HaulError(error.code, "\(source): \(error.message)", hint: error.hint)
            }
            let wanted = metaurl.name ?? name
            guard let file = nested.files.first(where: { $0.name == wanted }) ?? (nested.files.count == 1 ? nested.files.first : nil) else {
                throw HaulError.usage("\(source) lists no file '\(SafeText.cleanLine(wanted))'", hint: "give the <metaurl> a name= of a file it lists")
            }
            if let size, let other = file.size, other != size {
                throw HaulError.usage(
                    "\(source) gives the file \(other) bytes, but this Metalink says \(size)", hint: "the Metalinks describe different versions of the file")
            }
            let known = Set(mirrors.map(\.url))
            mirrors += file.mirrors.filter { !known.contains($0.url) }.map {
                Metalink.Mirror(url: $0.url, priority: metaurl.priority, location: $0.location)
            }
        }
        return Metalink.File(
            name: name, size: size, checksum: checksum, pieces: pieces, mirrors: try Metalink.ordered(mirrors, of: shown), metaurls: [])
    }
}
