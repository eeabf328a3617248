import Foundation
import HaulCore
import HaulMetrics
import HaulTestSupport
import Testing

/// A `MetricsServer` on `host` (127.0.0.1 unless told, `[::1]` for IPv6) at a port that was
/// free: ports are tried from a random start until one is not `metrics-addr-in-use`.
func startServerOnFreePort(
    _ registry: MetricsRegistry, host: String = "127.0.0.1", health: @escaping @Sendable () -> (ok: Bool, reason: String) = { (true, "") }
) throws -> MetricsServer {
    let first = Int.random(in: 20_000...60_000)
    for port in first..<first + 200 {
        let server: MetricsServer
        do {
            server = try MetricsServer(address: "\(host):\(port)", registry: registry, health: health)
        } catch {
            if error.code == .metricsAddrInUse { continue }
            throw error
        }
        return server
    }
    throw HaulError(.internal, "no free port from \(first) on")
}

/// What `curl` got: status, headers with lower-cased names, and body.
struct CurlReply {
    var status: Int
    var headers: [String: String]
    var body: String
}

/// Runs `curl -sS -i` (plus `extra` arguments) against `url` and splits its output.
func curl(_ url: String, _ extra: [String] = []) throws -> CurlReply {
    let output = try run("curl", ["-sS", "-i", "--max-time", "20", "--noproxy", "*"] + extra + [url])
    guard let split = output.range(of: "\r\n\r\n") else { throw HaulError(.internal, "no header end in curl output: \(output)") }
    let head = output[..<split.lowerBound].components(separatedBy: "\r\n")
    let statusWords = head[0].split(separator: " ")
    guard statusWords.count >= 2, let status = Int(statusWords[1]) else { throw HaulError(.internal, "bad status line \(head[0])") }
    var headers: [String: String] = [:]
    for line in head.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return CurlReply(status: status, headers: headers, body: String(output[split.upperBound...]))
}

/// One sample as Python's `prometheus_client` parser read it.
struct ParsedSample: Decodable, Equatable {
    var family: String
    var type: String
    var name: String
    var labels: [String: String]
    var value: String

    var number: Double? { Double(value) }
}

/// Parses exposition text with `prometheus_client.parser.text_string_to_metric_families`, the
/// independent peer; Python is `$HAUL_TEST_PYTHON` or `python3`.
func parseWithPrometheusClient(_ text: String) throws -> [ParsedSample] {
    let script = """
        import json, sys
        try:
            from prometheus_client.parser import text_string_to_metric_families
        except ImportError:
            sys.exit("prometheus_client is missing: pip install prometheus-client")
        out = []
        for family in text_string_to_metric_families(sys.stdin.read()):
            for s in family.samples:
                out.append({"family": family.name, "type": family.type, "name": s.name,
                            "labels": dict(s.labels), "value": repr(float(s.value))})
        print(json.dumps(out))
        """
    let python = ProcessInfo.processInfo.environment["HAUL_TEST_PYTHON"] ?? "python3"
    let json = try run(python, ["-c", script], stdin: text)
    return try JSONDecoder().decode([ParsedSample].self, from: Data(json.utf8))
}

/// Runs `program` (looked up on PATH) and returns its standard output; throws with its
/// standard error when it exits non-zero.
func run(_ program: String, _ arguments: [String], stdin: String? = nil) throws -> String {
    let result = try Run.program("/usr/bin/env", [program] + arguments, stdin: stdin)
    guard result.status == 0 else { throw TestFailure("\(program) exited with \(result.status): \(result.stderr)") }
    return result.stdout
}
