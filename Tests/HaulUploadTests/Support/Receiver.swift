import CCurl
import Foundation
import HaulCore
import HaulTestSupport

@testable import HaulUpload

/// `curl_global_init`, run once for the test process before the first transfer.
let curlGlobalInit: Void = { _ = curl_global_init(haul_global_all()) }()

/// A receiver script from `Receivers/`, run with `python3` (or `$HAUL_TEST_PYTHON`) on
/// 127.0.0.1 at a port the kernel chose; killed when released, so a failing test cleans up too.
///
/// SIGKILL, not SIGTERM: a child spawned from a dispatch worker thread inherits its blocked
/// signal mask, so it would never see SIGTERM.
final class Receiver {
    private let process = Process()
    /// `http://127.0.0.1:<port>`.
    let base: String

    init(_ script: String, _ arguments: [String] = []) throws {
        let receivers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Receivers")
        let python = ProcessInfo.processInfo.environment["HAUL_TEST_PYTHON"] ?? "python3"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, receivers.appendingPathComponent(script).path] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                throw HaulError(.internal, "\(script) exited before listening", hint: "pip install multipart tuspyserver uvicorn fastapi")
            }
            line.append(chunk)
        }
        let words = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.count >= 2, words[0] == "PORT", let port = Int(words[1]) else {
            throw HaulError(.internal, "\(script) did not print its port")
        }
        base = "http://127.0.0.1:\(port)"
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Polls `/stats` (every 10 ms, for at most 30 s) until the receiver handles no PATCH: the
    /// tus receiver's lock would otherwise stall a resume behind an interrupted request.
    func waitUntilIdle() throws {
        for _ in 0..<3000 where try json("/stats")["active"] as? Int != 0 {
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// GETs `path` and decodes the JSON object the receiver answers.
    func json(_ path: String) throws -> [String: Any] {
        _ = curlGlobalInit
        let transfer = try CurlTransfer(url: base + path, headers: [], caBundle: nil, insecure: false, redactor: Redactor(url: base, headers: []))
        let body = try transfer.perform().body
        return try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
    }
}
