import Foundation
import HaulCore
import HaulHTTP
import HaulMetrics
import HaulQueue
import Synchronization

/// What the role threads of one worker process share. Every field is immutable or synchronised.
final class WorkerShared: Sendable {
    let config: WorkerConfig
    let wakeup = Wakeup()
    let progress: ProgressCounter
    let durability: Durability
    let metrics = WorkerMetrics()
    private let stopping = Atomic<Bool>(false)

    init(config: WorkerConfig, progress: ProgressCounter) {
        self.config = config
        self.progress = progress
        durability = Durability(config: config, wakeup: wakeup)
    }

    /// Whether a graceful stop was asked for.
    @Sendable func isStopping() -> Bool { stopping.load(ordering: .relaxed) }

    func requestStop() {
        stopping.store(true, ordering: .relaxed)
        wakeup.signal()
    }

    /// The worker's TLS defaults with the transfer's own options on top.
    func tls(for info: TransferInfo) -> TLSOptions {
        var tls = config.tls
        if let ca = info.options.caCert { tls.caBundle = ca }
        if info.options.insecure == true { tls.insecure = true }
        return tls
    }
}

/// A worker process's roles running on dedicated threads (never the concurrency pool, since
/// libcurl and libpq block). `run()` returns once `stop()` was called and in-flight work has
/// been checkpointed and released.
public final class Worker: Sendable {
    private let shared: WorkerShared
    private let group = DispatchGroup()
    private let metricsServer = Mutex<MetricsServer?>(nil)

    /// Prepares a worker; nothing runs until `run()`.
    public init(config: WorkerConfig, progress: ProgressCounter = ProgressCounter()) {
        shared = WorkerShared(config: config, progress: progress)
    }

    /// Starts every role thread, then blocks until they have all finished after `stop()`.
    public func run() {
        start()
        _ = waitUntilStopped(timeout: .infinity)
    }

    /// Starts every role thread and returns; `waitUntilStopped` joins them after `stop()`.
    public func start() {
        let config = shared.config
        shared.durability.start()
        if !config.roles.isDisjoint(with: [.planner, .fetcher, .finalizer]) {
            for index in 0..<config.concurrency { spawn("lane-\(index)") { [shared] in Lane(shared: shared).step } }
        }
        spawn("housekeeper", interval: config.heartbeat) { [shared] in Housekeeper(shared: shared).step }
        if !config.pollOnly {
            // Not part of `group`: it only wakes others and holds nothing, so stopping never waits for it.
            let thread = Thread { [shared] in
                Listener(shared: shared).run()
            }
            thread.name = "listener"
            thread.start()
        }
        Log.info(
            "worker started",
            [("id", config.workerID), ("roles", config.roles.map(\.rawValue).sorted().joined(separator: ",")), ("concurrency", String(config.concurrency))])
    }

    /// Serves `/metrics` and `/healthz` on `address` (`HOST:PORT`) until the worker stops.
    /// Healthy while the database answered within three heartbeats.
    public func serveMetrics(on address: String) throws {
        let metrics = shared.metrics
        let window = max(15, shared.config.heartbeat * 3)
        let server = try MetricsServer(address: address, registry: metrics.registry, health: { metrics.health(window: window) })
        metricsServer.withLock { $0 = server }
    }

    /// Waits at most `timeout` seconds for the threads to finish, then marks this worker
    /// stopped in the registry. - Returns: whether they all finished.
    public func waitUntilStopped(timeout: Double) -> Bool {
        let finished: Bool
        if timeout.isInfinite {
            group.wait()
            finished = true
        } else {
            finished = group.wait(timeout: .now() + timeout) == .success
        }
        metricsServer.withLock { $0?.stop() }
        // Past the grace period (the database is likely gone) nothing more is waited for:
        // unrecorded leases simply expire and are rescued.
        guard finished else { return false }
        shared.durability.stop(timeout: 5)
        Housekeeper(shared: shared).deregister()
        return true
    }

    /// On S3 storage, aborts the uploads of canceled and failed transfers now, on a connection of
    /// its own (`haul get` calls it after its worker stopped, so a failed get leaves no upload open).
    public func abortStoppedUploads() {
        guard let store = shared.config.objectStore else { return }
        let database = Database(conninfo: shared.config.conninfo, stopping: { false })
        do { try store.abortAbandoned(database) } catch { Log.warning("could not abort S3 uploads of stopped transfers", [("error", "\(error)")]) }
    }

    /// Asks every role to stop claiming and to checkpoint and release what it holds.
    public func stop() {
        shared.requestStop()
    }

    /// Runs `makeStep()`'s step in a loop on its own thread until stopped, sleeping when idle.
    private func spawn(_ name: String, interval: Double? = nil, _ makeStep: @escaping @Sendable () -> () throws -> Bool) {
        group.enter()
        let thread = Thread { [shared, group] in
            let step = makeStep()
            var failures = 0
            while !shared.isStopping() {
                do {
                    let worked = try step()
                    failures = 0
                    if !worked || interval != nil { shared.wakeup.wait(timeout: interval ?? shared.config.pollInterval) }
                } catch {
                    failures += 1
                    if failures == 1 { Log.warning("\(name) hit an error; retrying", [("error", "\(error)")]) }
                    // Back off, but a stop still ends the wait at once.
                    let until = Date(timeIntervalSinceNow: min(5, Double(failures)))
                    while !shared.isStopping(), until.timeIntervalSinceNow > 0 { shared.wakeup.wait(timeout: until.timeIntervalSinceNow) }
                }
            }
            group.leave()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }
}
