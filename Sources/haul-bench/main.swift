// haul-bench: drives Haul's own claim and complete code (HaulQueue.SegmentLeases) against a
// filled database, for bench/run. Not part of the `haul` product.
//
//   haul-bench throughput CONNINFO CLIENTS SECONDS   → ops=… empty=… contended=… secs=… ops_per_s=…
//   haul-bench latency CONNINFO CLAIMS               → n=… p50_ms=… p90_ms=… p99_ms=… mean_ms=…
//   haul-bench explain CONNINFO                      → EXPLAIN (ANALYZE, BUFFERS) of the claim, rolled back
import Foundation
import HaulPostgres
import HaulQueue
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("haul-bench: \(message)\n".utf8))
    exit(2)
}

/// What one claim of `claimAndComplete` did.
enum ClaimOutcome {
    /// It claimed a segment and completed it.
    case done
    /// It took nothing: another claimer held its host's row (`ClaimContention`).
    case contended
    /// It took nothing else.
    case empty
}

/// Claims one segment and completes it at once.
func claimAndComplete(_ leases: SegmentLeases) throws -> ClaimOutcome {
    let attempt = try leases.attempt(limit: 1, lease: 30)
    guard let segment = attempt.segments.first else { return attempt.hostContended ? .contended : .empty }
    _ = try leases.complete(segment, bytesDone: segment.length ?? 0, part: nil)
    return .done
}

/// A worker's default poll interval (`haul worker --poll-interval`), which bounds the waits
/// after contended claims.
let pollInterval = 1.0

/// Claim + complete in a loop on each of `clients` connections for `seconds`. A claim that met
/// another at the host's row waits as a worker's lane does (`ClaimContention`: 10 ms, 40 ms, …
/// jittered, then a poll interval): Haul's claims never queue on that row, and a client that
/// claimed again at once would measure a busy loop no worker runs.
func throughput(conninfo: String, clients: Int, seconds: Double) {
    let totals = Mutex<(ops: Int, empty: Int, contended: Int)>((0, 0, 0))
    let stop = Atomic<Bool>(false)
    let group = DispatchGroup()
    let started = Date()
    for client in 0..<clients {
        group.enter()
        Thread {
            defer { group.leave() }
            guard let conn = try? PostgresConnection(conninfo: conninfo) else { fail("cannot connect") }
            let leases = SegmentLeases(conn, workerID: "bench-\(client)")
            var ops = 0
            var empty = 0
            var contended = 0
            var rounds = 0
            while !stop.load(ordering: .relaxed) {
                do {
                    switch try claimAndComplete(leases) {
                    case .done:
                        ops += 1
                        rounds = 0
                    case .empty:
                        empty += 1
                        rounds = 0
                    case .contended:
                        contended += 1
                        rounds += 1
                        let jitter = Double.random(in: 0.5..<1.5)
                        Thread.sleep(forTimeInterval: ClaimContention.delay(rounds: rounds, pollInterval: pollInterval, jitter: jitter) ?? pollInterval)
                    }
                } catch {
                    fail("\(error)")
                }
            }
            totals.withLock {
                $0.ops += ops; $0.empty += empty; $0.contended += contended
            }
        }.start()
    }
    Thread.sleep(forTimeInterval: seconds)
    stop.store(true, ordering: .relaxed)
    group.wait()
    let elapsed = Date().timeIntervalSince(started)
    let (ops, empty, contended) = totals.withLock { $0 }
    print(String(format: "ops=%d empty=%d contended=%d secs=%.2f ops_per_s=%.1f", ops, empty, contended, elapsed, Double(ops) / elapsed))
}

func latency(conninfo: String, claims: Int) throws {
    let conn = try PostgresConnection(conninfo: conninfo)
    let leases = SegmentLeases(conn, workerID: "bench-latency")
    var samples: [Double] = []
    for _ in 0..<claims {
        let started = Date()
        guard let segment = try leases.claim(limit: 1, lease: 30).first else { break }
        samples.append(Date().timeIntervalSince(started) * 1000)
        _ = try leases.complete(segment, bytesDone: segment.length ?? 0, part: nil)
    }
    guard !samples.isEmpty else { fail("the queue is empty") }
    samples.sort()
    let pick = { (fraction: Double) in samples[min(samples.count - 1, Int(Double(samples.count) * fraction))] }
    print(
        String(
            format: "n=%d p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f mean_ms=%.3f", samples.count, pick(0.5), pick(0.9), pick(0.99),
            samples.reduce(0, +) / Double(samples.count)))
}

let arguments = CommandLine.arguments
switch (arguments.count, arguments.count > 1 ? arguments[1] : "") {
case (5, "throughput"):
    guard let clients = Int(arguments[3]), let seconds = Double(arguments[4]) else { fail("CLIENTS and SECONDS are numbers") }
    throughput(conninfo: arguments[2], clients: clients, seconds: seconds)
case (4, "latency"):
    guard let claims = Int(arguments[3]) else { fail("CLAIMS is a number") }
    do { try latency(conninfo: arguments[2], claims: claims) } catch { fail("\(error)") }
case (3, "explain"):
    do {
        print(try SegmentLeases(PostgresConnection(conninfo: arguments[2]), workerID: "bench-explain").explainClaim(limit: 1))
    } catch { fail("\(error)") }
default:
    fail("usage: haul-bench throughput CONNINFO CLIENTS SECONDS | latency CONNINFO CLAIMS | explain CONNINFO")
}
