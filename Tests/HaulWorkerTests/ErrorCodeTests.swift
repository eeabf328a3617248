import Foundation
import HaulCore
import HaulWorker
import Testing

/// The error codes as one vocabulary: each declared once as a named constant with its doc and
/// exit status, known when read back from storage, and never written as a bare string.
@Suite("error codes")
struct ErrorCodeTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// One declaration found in the sources: the word, the `///` lines above it, and where.
    struct Declaration {
        let word: String
        let doc: [String]
        let place: String
    }

    /// Every Swift file under Sources/, with its path relative to it.
    static func swiftFiles() throws -> [(path: String, text: String)] { try files(ending: ".swift") }

    /// Every statement file of the sources (`Module/SQL/Area/name.sql`), with its text.
    static func sqlFiles() throws -> [(path: String, text: String)] { try files(ending: ".sql") }

    /// Every file under Sources/ whose name ends in `suffix`, with its path relative to it.
    static func files(ending suffix: String) throws -> [(path: String, text: String)] {
        let paths = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        return try paths.filter { $0.hasSuffix(suffix) }.sorted().map {
            ($0, try String(contentsOf: sources.appendingPathComponent($0), encoding: .utf8))
        }
    }

    /// Every `public static let NAME = Self("word", exit: ExitStatus.STATUS)` in the sources.
    static func declarations() throws -> [Declaration] {
        let declaration = /^\s*public static let `?\w+`? = Self\("([a-z0-9-]+)", exit: ExitStatus\.\w+\)$/
        var found: [Declaration] = []
        for (path, text) in try swiftFiles() {
            var doc: [String] = []
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("///") {
                    doc.append(String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces))
                    continue
                }
                if let match = String(line).wholeMatch(of: declaration) {
                    found.append(Declaration(word: String(match.1), doc: doc, place: "\(path):\(number + 1)"))
                }
                doc = []
            }
        }
        return found
    }

    @Test("every code is declared once, with what it means and what to do, and is known when read back from storage")
    func declaredOnceWithDocs() throws {
        let declared = try Self.declarations()
        #expect(declared.count > 80)
        #expect(Set(declared.map(\.word)).count == declared.count, "a code is declared twice")
        #expect(Set(declared.map(\.word)) == Set(HaulError.Code.known.map(\.rawValue)), "HaulError.Code.known lacks a declared code")
        #expect(HaulError.Code.known.count == declared.count)
        for code in declared {
            // Two paragraphs: what it means, a bare `///`, then what the operator should do.
            let blank = code.doc.firstIndex(of: "")
            #expect(blank.map { $0 > 0 && $0 < code.doc.count - 1 } == true, "\(code.place): '\(code.word)' needs a /// doc of two paragraphs")
        }
    }

    @Test("every code exits with one of the failure statuses of the exit status table")
    func exitStatuses() {
        let failures: Set<Int32> = [
            ExitStatus.failure, ExitStatus.usage, ExitStatus.network, ExitStatus.tls, ExitStatus.authentication,
            ExitStatus.malformedResponse, ExitStatus.originError, ExitStatus.storage, ExitStatus.checksumMismatch,
        ]
        for code in HaulError.Code.known {
            #expect(failures.contains(code.exitStatus), "\(code) exits \(code.exitStatus)")
        }
        #expect(HaulError.Code(stored: "tls-verify", among: HaulError.Code.known).exitStatus == ExitStatus.tls)
        #expect(HaulError.Code(stored: "destination-not-empty", among: HaulError.Code.known).exitStatus == ExitStatus.usage)
        #expect(HaulError.Code(stored: "from-a-newer-version", among: HaulError.Code.known).exitStatus == ExitStatus.failure)
    }

    @Test("no code is made from a string outside its declaration, and every code SQL names is a known code")
    func noBareCodes() throws {
        let known = Set(HaulError.Code.known.map(\.rawValue))
        let made = /(Self|Code)\("[^"]*"/
        let declaration = /^\s*public static let `?\w+`? = Self\("[a-z0-9-]+", exit: ExitStatus\.\w+\)$/
        let inSQL = /error_code\s*(?:=|<>|IN\s*\()\s*'([^']*)'/
        var sqlCodes = 0
        for (path, text) in try Self.swiftFiles() + Self.sqlFiles() {
            for line in text.split(separator: "\n") {
                let line = String(line)
                if line.contains(made) { #expect(line.wholeMatch(of: declaration) != nil, "\(path): a code made from a string: \(line)") }
                for match in line.matches(of: inSQL) {
                    sqlCodes += 1
                    #expect(known.contains(String(match.1)), "\(path): SQL names '\(match.1)', which is no declared code")
                }
            }
        }
        #expect(sqlCodes > 0)
    }
}
