import Foundation
import HaulCore
import Synchronization

/// A batch mirror manifest: one transfer per line, as `URL [DEST]` (with further URLs of the
/// same file after the first, tab-separated as aria2 writes them: `URL<TAB>MIRROR [DEST]`) or
/// as a JSON object.
/// Pure: parsing and validation only; `TransferStore.enqueue(batch:)` inserts the result.
///
/// ```
/// # comments and blank lines are skipped
/// https://mirror.example/pool/a.deb                debs/a.deb
/// https://mirror.example/pool/b.deb                # DEST defaults to the URL's path: pool/b.deb
/// {"url": "https://x/y.tar.gz", "dest": "y.tgz", "checksum": "sha256:…", "priority": 5, "extract": true}
/// ```
public enum Manifest {
    /// A line that could not be used, with its 1-based number and the reason.
    public struct Reject: Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }

        /// A reject of line `line` (1-based) for `reason`.
        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// Parses every line; `base` supplies the settings a line does not give (segment size, layout…).
    public static func parse(_ text: String, base: NewTransfer) -> (entries: [NewTransfer], rejects: [Reject]) {
        let (numbered, rejects) = parseNumbered(text, base: base)
        return (numbered.map(\.transfer), rejects)
    }

    /// `parse`, with each entry's 1-based line number, to report what the database refuses per line.
    ///
    /// Each line is checked on its own (URL, destination, JSON) on every core at once, in
    /// contiguous runs of lines: that is most of the work, a few microseconds a line, and a
    /// manifest has 100 000 lines while the workers wait for its commit. The checks between
    /// lines (a repeated entry, two lines writing one destination) then run in line order, so
    /// the result is the same as line by line.
    public static func parseNumbered(_ text: String, base: NewTransfer) -> (entries: [(line: Int, transfer: NewTransfer)], rejects: [Reject]) {
        // Lines and fields are cut over the bytes: a manifest has 100 000 lines, and as Characters
        // a CRLF ending is one Character that a split on "\n" would not see.
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let parsed = inParallel(lines.count, minimumRun: 1024) { range in lines[range].map { parseLine(Substring($0), base: base) } }
        var entries: [(line: Int, transfer: NewTransfer)] = []
        entries.reserveCapacity(parsed.count)
        var rejects: [Reject] = []
        var seen = Set<String>()
        var destinations: [String: Int] = [:]
        for (index, line) in parsed.enumerated() {
            do {
                guard let entry = try line?.get() else { continue }
                let key = "\(entry.url)\u{0}\(entry.dest ?? "")"
                guard seen.insert(key).inserted else {
                    throw HaulError.usage("the same URL and destination appear on an earlier line")
                }
                if let dest = entry.dest {
                    if let earlier = destinations[dest] { throw HaulError.usage("line \(earlier) already writes '\(dest)'") }
                    destinations[dest] = index + 1
                }
                entries.append((index + 1, entry))
            } catch let error as HaulError {
                rejects.append(Reject(line: index + 1, reason: error.description))
            } catch {
                rejects.append(Reject(line: index + 1, reason: "\(error)"))
            }
        }
        return (entries, rejects)
    }

    /// One line on its own: `nil` for a blank line or a comment, else its transfer or why not.
    private static func parseLine(_ raw: Substring, base: NewTransfer) -> Result<NewTransfer, Error>? {
        let line = raw.trimmingWhitespace()
        guard !line.isEmpty, !line.hasPrefix("#") else { return nil }
        return Result { try line.hasPrefix("{") ? json(line, base: base) : plain(line, base: base) }
    }

    /// `work` over `0..<count` cut into one contiguous run per core (a single run below
    /// `minimumRun` items a core), the runs' results joined in order.
    static func inParallel<Item: Sendable>(_ count: Int, minimumRun: Int, _ work: @Sendable (Range<Int>) -> [Item]) -> [Item] {
        let runs = max(1, min(ProcessInfo.processInfo.activeProcessorCount, count / max(minimumRun, 1)))
        guard runs > 1 else { return work(0..<count) }
        let results = Mutex<[[Item]]>(Array(repeating: [], count: runs))
        DispatchQueue.concurrentPerform(iterations: runs) { run in
            let part = work((count * run / runs)..<(count * (run + 1) / runs))
            results.withLock { $0[run] = part }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    private static func plain(_ line: String, base: NewTransfer) throws -> NewTransfer {
        let fields = line.utf8.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }).map { String(Substring($0)) }
            .prefix { !$0.startsWithBytes(of: "#") }
        // Several URLs of one file (aria2's input-file form), then the DEST if any.
        let urls = fields.prefix { $0.containsBytes(of: "://") }
        let rest = fields.dropFirst(max(urls.count, 1))
        guard rest.count <= 1 else {
            throw HaulError.usage(
                "expected 'URL [MIRROR...] [DEST]' but found \(rest.count) fields after the URLs",
                hint: "quote nothing; a DEST with spaces needs the JSON form")
        }
        var transfer = try entry(url: fields[0], dest: rest.first, base: base)
        transfer.mirrors = try urls.dropFirst().map { try OriginURL.validate($0) }
        return transfer
    }

    private static func json(_ line: String, base: NewTransfer) throws -> NewTransfer {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw HaulError.usage("not a valid JSON object")
        }
        let known: Set<String> = ["url", "dest", "checksum", "headers", "priority", "extract", "upload_to"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw HaulError.usage("unknown key '\(unknown)'", hint: "keys are \(known.sorted().joined(separator: ", "))")
        }
        guard let url = object["url"] as? String else { throw HaulError.usage("\"url\" is missing or not a string") }
        var transfer = try entry(url: url, dest: object["dest"] as? String, base: base)
        if let checksum = object["checksum"] as? String { transfer.checksum = try Checksum(parsing: checksum) }
        if let priority = object["priority"] {
            guard let number = priority as? Int else { throw HaulError.usage("\"priority\" is not a whole number") }
            transfer.priority = number
        }
        if let extract = object["extract"] as? Bool { transfer.options.extract = extract ? true : nil }
        if let upload = object["upload_to"] as? String { transfer.options.uploadTo = try UploadTarget.validate(upload) }
        if let headers = object["headers"] as? [String: String] {
            transfer.headers += try headers.sorted { $0.key < $1.key }.map { try Header.parse("\($0.key): \($0.value)") }
        } else if let headers = object["headers"] as? [String] {
            transfer.headers += try headers.map(Header.parse)
        } else if object["headers"] != nil {
            throw HaulError.usage("\"headers\" must be an object of name to value, or a list of 'Name: value'")
        }
        return transfer
    }

    private static func entry(url: String, dest: String?, base: NewTransfer) throws -> NewTransfer {
        let url = try OriginURL.validate(url)
        var transfer = base
        transfer.url = url
        if let dest {
            transfer.dest = try SafePath.validateDestination(dest, what: "DEST")
        } else {
            guard let path = URLComponents(string: url)?.path.removingPercentEncoding, !path.slashComponents().isEmpty else {
                throw HaulError.usage("the URL has no path to name the file by", hint: "give a DEST after the URL")
            }
            transfer.dest = try SafePath.validateDestination(String(path.unicodeScalars.drop { $0 == "/" }), what: "the URL's path")
        }
        return transfer
    }
}
