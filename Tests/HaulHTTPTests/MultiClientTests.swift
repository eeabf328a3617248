import Foundation
import HaulCore
import HaulHTTP
import Testing

/// `MultiClient` against the test nginx (`HAUL_TEST_ORIGIN`, files written to `HAUL_TEST_DOCROOT`).
@Suite("many GETs at once over libcurl's multi interface")
struct MultiClientTests {
    let origin: String
    let docroot: String

    init() throws {
        let environment = ProcessInfo.processInfo.environment
        origin = try #require(environment["HAUL_TEST_ORIGIN"], "run under bin/test (needs the test nginx)")
        docroot = try #require(environment["HAUL_TEST_DOCROOT"])
        Self.curl
    }

    private static let curl: Void = Curl.initialize()

    /// Writes files of the given sizes under a fresh folder; returns their URL paths and contents.
    private func files(_ sizes: [Int]) throws -> [(path: String, data: Data)] {
        let folder = "multi-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: docroot + "/" + folder, withIntermediateDirectories: true)
        return try sizes.enumerated().map { index, size in
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
            let path = "/\(folder)/f\(index)"
            try data.write(to: URL(fileURLWithPath: docroot + path))
            return (path, data)
        }
    }

    /// Runs one GET per path, collecting each body and outcome by index.
    private func run(_ client: MultiClient, _ paths: [String], refuse: Set<Int> = [], shouldContinue: @escaping () -> Bool = { true }) -> [Result<Data, Error>]
    {
        final class Body { var data = Data() }
        let bodies = paths.map { _ in Body() }
        let jobs = paths.enumerated().map { index, path in
            MultiClient.Job(
                request: FetchRequest(url: origin + path),
                onHead: { head in
                    if refuse.contains(index) { throw HaulError(.internal, "job \(index) refused its answer \(head.status)") }
                },
                onData: { bodies[index].data.append(contentsOf: $0) })
        }
        var outcomes = [Result<Data, Error>?](repeating: nil, count: paths.count)
        client.run(jobs, shouldContinue: shouldContinue) { index, result in
            outcomes[index] = result.flatMap { summary in
                summary.head.status == 200 ? .success(bodies[index].data) : .failure(HaulError(.internal, "HTTP \(summary.head.status)"))
            }
        }
        return outcomes.map { $0 ?? .failure(HaulError(.internal, "no outcome")) }
    }

    @Test("every body arrives whole, and one job's failure or refusal leaves the others alone")
    func bodiesAndFailures() throws {
        let served = try files([0, 1, 4096, 4097, 1_048_576 + 3, 65_536, 7, 300_000])
        let client = MultiClient()
        let paths = served.map(\.path) + ["/multi-missing/nothing-here"]
        let outcomes = run(client, paths, refuse: [1])
        for (index, file) in served.enumerated() where index != 1 {
            #expect((try? outcomes[index].get()) == file.data, "file \(index) of \(file.data.count) bytes")
        }
        #expect(throws: HaulError.self) { try outcomes[1].get() }
        #expect(throws: HaulError.self) { try outcomes[served.count].get() }
    }

    @Test("a second run to the same origin reuses the first run's connections")
    func connectionsAreReused() throws {
        let served = try files(Array(repeating: 4096, count: 16))
        let client = MultiClient()
        let first = run(client, Array(served.map(\.path).prefix(8)))
        let second = run(client, Array(served.map(\.path).suffix(8)))
        #expect((first + second).allSatisfy { (try? $0.get())?.count == 4096 })
        let log = try String(contentsOfFile: try #require(ProcessInfo.processInfo.environment["HAUL_TEST_ACCESS_LOG"]), encoding: .utf8)
        func connections(_ paths: ArraySlice<(path: String, data: Data)>) -> Set<String> {
            Set(
                log.split(separator: "\n").filter { line in paths.contains { line.contains(" \($0.path) ") } }
                    .compactMap { $0.split(separator: " ").last.map(String.init) })
        }
        let firstConnections = connections(served.prefix(8))
        let secondConnections = connections(served.suffix(8))
        // libcurl replaces a cached connection it finds unusable when it takes it up again (seen
        // once, in a fresh-clone run under load: one of eight); a client that did not keep its
        // connections would open eight new ones.
        #expect(!firstConnections.isEmpty && secondConnections.subtracting(firstConnections).count <= 1, "\(firstConnections) then \(secondConnections)")
    }

    @Test("shouldContinue false interrupts every job still running")
    func interruption() throws {
        let served = try files([12 * 1_048_576, 12 * 1_048_576])
        let client = MultiClient()
        // The test nginx's /slow/ location sends 4 MiB at once, then 4 MiB/s: each file takes two seconds.
        let started = Date()
        let outcomes = run(client, served.map { "/slow" + $0.path }, shouldContinue: { Date().timeIntervalSince(started) < 0.3 })
        for outcome in outcomes {
            #expect(throws: HaulError.self) { try outcome.get() }
            if case .failure(let error as HaulError) = outcome { #expect(error.code == .interrupted) }
        }
    }
}
