import Foundation
import HaulCore
import HaulHTTP
import HaulMetrics
import HaulPostgres
import HaulQueue
import HaulStorage
import Synchronization

/// What the role threads of one worker process share. Every field is immutable or synchronised.
final class WorkerShared: Sendable {
    let config: WorkerConfig
    let wakeup = Wakeup()
    /// What lanes that start on demand (`WorkerConfig.lanesOnDemand`) wait for before their first step.
    let laneStart = Wakeup()
    /// When a lane last gave its segment back to waiting work (`FairShare`).
    let yieldTurns = YieldTurns()
    let progress: ProgressCounter
    let checkpoints: CheckpointRecorder
    let metrics: WorkerMetrics
    /// The files `haul get` transfers named by the origin save (see `OriginNames`).
    let originNames = OriginNames()
    /// The partial files this process's `haul get` transfers hold locked until they publish them.
    let heldPartials = HeldPartials()
    /// Where every request of this worker waits to keep `--limit-rate`; `nil` without one.
    let pacer: SharedRatePacer?
    /// Readable once a stop was asked for (the listener polls it beside its socket).
    let stopSignal = StopSignal()
    private let stopping = Atomic<Bool>(false)
    /// The idle lane that polls for the worker (`IdlePolling`), -1 when none is idle.
    private let poller = Atomic<Int>(-1)

    /// The worker's few database connections.
    private let links: DatabaseLinks

    init(config: WorkerConfig, progress: ProgressCounter, adopting connection: PostgresConnection? = nil) {
        self.config = config
        self.progress = progress
        pacer = config.limitRate.map(SharedRatePacer.init)
        let metrics = WorkerMetrics()
        self.metrics = metrics
        let links = DatabaseLinks(config: config, adopting: connection, contact: metrics)
        self.links = links
        // Its writes are owed (completions, last checkpoints): it keeps retrying through an
        // outage, and `stop(timeout:)` bounds how long a stopping worker waits for it.
        checkpoints = CheckpointRecorder(config: config, database: ResilientConnection(link: links.recorder, stopping: { false }), wakeup: wakeup)
    }

    /// Where `info`'s partial file stays locked between writes: `heldPartials` for a `haul get`'s
    /// file, which only this process writes; `nil` for a fleet's, whose segments other hosts write
    /// (the database keeps those apart).
    func heldPartials(for info: TransferInfo) -> HeldPartials? {
        info.options.localTarget != nil ? heldPartials : nil
    }

    /// A lane's way to the database: one of the connections the lanes share, in turn.
    func laneDatabase() -> ResilientConnection {
        ResilientConnection(link: links.forLane(), stopping: { [self] in isStopping() })
    }

    /// Housekeeping's way to the database (the connection lease renewals use too).
    /// - Parameter patient: keep retrying through an outage after a stop (writes that are owed).
    func maintenanceDatabase(patient: Bool = false) -> ResilientConnection {
        let stopping: @Sendable () -> Bool
        if patient {
            stopping = { false }
        } else {
            stopping = { [self] in isStopping() }
        }
        return ResilientConnection(link: links.maintenance, stopping: stopping)
    }

    /// The connection finalizers' lease keepers renew on (housekeeping's).
    var leaseRenewalLink: DatabaseLink { links.maintenance }

    /// Makes lane `lane` the idle worker's poller if no other lane is. - Returns: whether it is.
    func takePollerTurn(_ lane: Int) -> Bool {
        let (exchanged, holder) = poller.compareExchange(expected: -1, desired: lane, ordering: .relaxed)
        return exchanged || holder == lane
    }

    /// Ends lane `lane`'s turn as the poller, if it had it.
    func leavePollerTurn(_ lane: Int) {
        _ = poller.compareExchange(expected: lane, desired: -1, ordering: .relaxed)
    }

    /// Whether a graceful stop was asked for.
    @Sendable func isStopping() -> Bool { stopping.load(ordering: .relaxed) }

    /// Sleeps `seconds`; only a stop (asked for after `mark` at the latest) ends it early.
    func pause(_ seconds: Double, since mark: Int) {
        let until = Date(timeIntervalSinceNow: seconds)
        var seen = mark
        while !isStopping(), case let left = until.timeIntervalSinceNow, left > 0 {
            wakeup.wait(since: seen, timeout: left, takingSingles: false)
            seen = wakeup.mark()
        }
    }

    func requestStop() {
        stopping.store(true, ordering: .relaxed)
        stopSignal.fire()
        announceWork()
    }

    /// Wakes every idle lane, those not started yet included: there is work for all of them
    /// (a plan's queued segments, rescued leases, a stop).
    func announceWork() {
        wakeup.signal()
        laneStart.signal()
    }

    /// Wakes one idle lane and starts one more on demand: there may be work for one more (files
    /// a batch left pending, host slots given back, a NOTIFY). A lane woken so that takes work
    /// wakes the next one in turn (`Lane.tookWork`).
    func announceWorkForOne() {
        wakeup.signalOne()
        laneStart.signalOne()
    }

    /// TLS for the transfer's upload target: the worker's defaults with the transfer's
    /// `--upload-ca-cert` / `--upload-insecure` (the origin's `--ca-cert` / `--insecure` do not apply).
    func uploadTLS(for info: TransferInfo) -> TLSOptions {
        var tls = config.tls
        if let ca = info.options.uploadCaCert { tls.caBundle = ca }
        if info.options.uploadInsecure == true { tls.insecure = true }
        return tls
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
    /// The role threads (lanes, housekeeper, listener), joined by `waitUntilStopped`.
    private let services = Mutex<[ServiceThread]>([])
    private let metricsServer = Mutex<MetricsServer?>(nil)

    /// Prepares a worker; nothing runs until `run()`.
    /// - Parameter connection: an open connection the caller no longer uses while the worker
    ///   runs (the command's own): the worker's housekeeping takes it over instead of opening
    ///   one more. The caller may use it again once `waitUntilStopped` returned.
    public init(config: WorkerConfig, progress: ProgressCounter = ProgressCounter(), adopting connection: PostgresConnection? = nil) {
        var config = config
        config.probeBatch = OpenFileLimit.batchLimit(requested: config.probeBatch, lanes: config.concurrency, openFiles: OpenFileLimit.raise())
        // Connections kept to the object store (and upload targets): 4 per lane. A request past
        // them waits for one to come back, at most the pool's patience: a lane's batch that
        // streams into more objects at once (a batch's connections, up to the host limit) is
        // slowed, never stalled, since no object's request waits for another's.
        CurlHandles.shared.limit(busy: config.concurrency * 4)
        shared = WorkerShared(config: config, progress: progress, adopting: connection)
    }

    /// Starts every role thread, then blocks until they have all finished after `stop()`.
    public func run() {
        start()
        _ = waitUntilStopped(timeout: .infinity)
    }

    /// Starts every role thread and returns; `waitUntilStopped` joins them after `stop()`.
    public func start() {
        let config = shared.config
        shared.checkpoints.start()
        if !config.roles.isDisjoint(with: [.planner, .fetcher, .finalizer]) {
            for index in 0..<config.concurrency {
                spawn("lane-\(index)", onDemand: config.lanesOnDemand && index > 0, lane: index) { [shared] in Lane(shared: shared).step }
            }
        }
        spawn("housekeeper", interval: config.heartbeat) { [shared] in
            let housekeeper = Housekeeper(shared: shared)
            return {
                _ = try housekeeper.step(); return .worked
            }
        }
        if !config.pollOnly {
            let listener = ServiceThread("listener") { [shared] in Listener(shared: shared).run() }
            services.withLock { $0.append(listener) }
        }
        Log.info(
            "worker started",
            [
                ("id", config.workerID), ("roles", config.roles.map(\.rawValue).sorted().joined(separator: ",")), ("concurrency", String(config.concurrency)),
                ("storage", config.backend.describe("")), ("database", ConnectionTarget.describe(config.conninfo)),
            ])
    }

    /// Serves `/metrics` and `/healthz` on `address` (`HOST:PORT`) until the worker stops.
    /// Healthy while the database answered within three heartbeats (at least 15 s), its last
    /// statement did not find it unreachable, and the storage root is writable.
    public func serveMetrics(on address: String) throws {
        let metrics = shared.metrics
        let window = max(15, shared.config.heartbeat * 3)
        let storage = shared.config.storage
        let server = try MetricsServer(
            address: address, registry: metrics.registry,
            health: {
                let database = metrics.health(window: window)
                guard database.ok else { return database }
                return storage.writeProblem().map { (false, $0) } ?? database
            })
        metricsServer.withLock { $0 = server }
        metrics.isServed = true
    }

    /// Waits at most `timeout` seconds for the threads to finish, then marks this worker
    /// stopped in the registry, through `connection` when the caller has one (no new connection
    /// on the way out). - Returns: whether they all finished.
    public func waitUntilStopped(timeout: Double, markingStoppedOn connection: PostgresConnection? = nil) -> Bool {
        let deadline: DispatchTime = timeout.isInfinite ? .distantFuture : .now() + timeout
        let finished = services.withLock { $0 }.allSatisfy { $0.join(until: deadline) }
        metricsServer.withLock { $0?.stop() }
        // Past the grace period (the database is likely gone) nothing more is waited for:
        // unrecorded leases simply expire and are rescued.
        guard finished else { return false }
        shared.checkpoints.stop(timeout: 5)
        Housekeeper.deregister(shared.config.workerID, on: connection, conninfo: shared.config.conninfo)
        return true
    }

    /// On a storage that leaves uploads open (S3), aborts the uploads of canceled and failed
    /// transfers now, on a connection of its own (`haul get` calls it after its worker stopped,
    /// so a failed get leaves no upload open).
    public func abortStoppedUploads() {
        guard shared.config.backend.features.contains(.openUploads) else { return }
        let database = shared.maintenanceDatabase(patient: true)
        do { try UploadSettler.abortAbandoned(shared.config, database: database) } catch {
            Log.warning("could not abort S3 uploads of stopped transfers", [("error", "\(error)")])
        }
    }

    /// Removes the partial data of this worker's canceled transfers now, on a connection of its
    /// own. `haul get` calls it after its worker stopped: a get canceled from elsewhere holds its
    /// partial file locked while it runs, so `haul cancel` leaves the file to it.
    public func removeCanceledData() {
        let database = shared.maintenanceDatabase(patient: true)
        do {
            try CanceledDataCleaner(shared: shared, database: database).runOnce()
        } catch {
            Log.warning("could not remove the partial data of canceled transfers", [("error", "\(error)")])
        }
    }

    /// Asks every role to stop claiming and to checkpoint and release what it holds.
    public func stop() {
        shared.requestStop()
    }

    /// Runs `makeStep()`'s step in a loop on its own thread until stopped, sleeping when idle
    /// (`IdlePolling`).
    /// - Parameters:
    ///   - interval: run every `interval` seconds instead, worked or not (housekeeping).
    ///   - onDemand: wait for an announcement of work (or a poll interval) before the first step.
    ///   - lane: the lane's number: while idle, one lane at a time polls (`IdlePolling`).
    private func spawn(
        _ name: String, interval: Double? = nil, onDemand: Bool = false, lane: Int? = nil,
        _ makeStep: @escaping @Sendable () -> () throws -> StepOutcome
    ) {
        // Taken before the thread exists: an announcement made before it runs is not missed.
        let startMark = shared.laneStart.mark()
        let service = ServiceThread(name) { [shared] in
            if onDemand { shared.laneStart.wait(since: startMark, timeout: shared.config.pollInterval) }
            let step = makeStep()
            var failures = 0
            var idleRounds = 0
            var contendedRounds = 0
            while !shared.isStopping() {
                // Taken before the step: a wake-up (a stop above all) given while it ran is not missed.
                let mark = shared.wakeup.mark()
                do {
                    let outcome = try step()
                    failures = 0
                    contendedRounds = outcome == .contended ? contendedRounds + 1 : 0
                    if let interval {
                        shared.pause(interval, since: mark)
                    } else if outcome == .worked {
                        // Work found by the poller: it has woken one more lane (`Lane.tookWork`).
                        if let lane { shared.leavePollerTurn(lane) }
                        idleRounds = 0
                    } else if outcome == .contended,
                        let delay = ClaimContention.delay(
                            rounds: contendedRounds, pollInterval: shared.config.pollInterval, jitter: Double.random(in: 0.5..<1.5))
                    {
                        shared.wakeup.wait(since: mark, timeout: delay)
                    } else {
                        idleRounds = outcome == .nothingAnywhere ? idleRounds + 1 : 1
                        let polls = lane.map { shared.takePollerTurn($0) } ?? true
                        let delay = IdlePolling.delay(idleRounds: idleRounds, pollInterval: shared.config.pollInterval, poller: polls)
                        shared.wakeup.wait(since: mark, timeout: delay)
                    }
                } catch {
                    failures += 1
                    if failures == 1 { Log.warning("\(name) hit an error; retrying", [("error", "\(error)")]) }
                    shared.pause(min(5, Double(failures)), since: mark)
                }
            }
        }
        services.withLock { $0.append(service) }
    }
}
