/// Why an active transfer is not running now, decided from facts read in one go
/// (`WaitReason.facts`); `haul status`, `haul list` and the dashboard show its `text`.
public enum WaitReason: Equatable, Sendable {
    /// Transfer `id` itself is paused.
    case transferPaused(id: Int64)
    /// Its origin host is paused (limit 0).
    case originPaused(host: String)
    /// No worker is alive; `warning` says since when (`WorkerRegistry.noLiveWorkerWarning`), or
    /// that none runs now (`noWorkerRunning`).
    case noLiveWorker(warning: String)
    /// A failed attempt waits for its retry until `until` (UTC); `reason` is the failure.
    case backingOff(until: String, reason: String?)
    /// Its origin host's slots are all taken: `running` of `limit`.
    case hostLimit(host: String, running: Int, limit: Int)
    /// It could run, but every live worker's lanes are taken: `running` segments on `workers` workers.
    case lanesBusy(running: Int, workers: Int)

    /// What is known about one transfer and the fleet at one moment.
    public struct Facts: Equatable, Sendable {
        public var id: Int64
        public var state: TransferState
        /// Its running segments (a probe or finalizing counts as running through its state, a
        /// small file a batch claim holds counts as one).
        public var running: Int
        /// Whether some of its work is due now: a queued segment, or the pending transfer, whose retry time has come.
        public var due: Bool
        /// The earliest retry time (UTC) of its work that failed and waits, and that failure.
        public var backoffUntil: String?
        public var backoffReason: String?
        public var host: String
        public var hostRunning: Int
        public var hostLimit: Int
        /// The no-live-worker warning, nil while a worker is alive.
        public var noLiveWorker: String?
        public var liveWorkers: Int
        /// Running segments across the fleet.
        public var fleetRunning: Int

        /// Facts of a transfer that could run at once; tests change the field they mean.
        public init(
            id: Int64 = 1, state: TransferState, running: Int = 0, due: Bool = true, backoffUntil: String? = nil, backoffReason: String? = nil,
            host: String = "h", hostRunning: Int = 0, hostLimit: Int = 8, noLiveWorker: String? = nil, liveWorkers: Int = 1,
            fleetRunning: Int = 0
        ) {
            self.id = id
            self.state = state
            self.running = running
            self.due = due
            self.backoffUntil = backoffUntil
            self.backoffReason = backoffReason
            self.host = host
            self.hostRunning = hostRunning
            self.hostLimit = hostLimit
            self.noLiveWorker = noLiveWorker
            self.liveWorkers = liveWorkers
            self.fleetRunning = fleetRunning
        }
    }

    /// The reason a transfer with `facts` waits, nil when it runs, is finished, or is between
    /// two steps (probing, finalizing, a segment about to be claimed by its own worker).
    /// The first that holds wins: paused, origin paused, no live worker, backing off, host limit, lanes busy.
    public static func decide(_ facts: Facts) -> WaitReason? {
        switch facts.state {
        case .paused: return .transferPaused(id: facts.id)
        case .pending, .downloading: break
        default: return nil
        }
        guard facts.running == 0 else { return nil }
        if facts.hostLimit == 0 { return .originPaused(host: facts.host) }
        // The registry's warning waits out `deadAfter` after the last worker stopped (a rolling
        // restart is no news to `wait`), but a transfer with no live worker is waiting for one.
        if let warning = facts.noLiveWorker ?? (facts.liveWorkers == 0 ? noWorkerRunning : nil) { return .noLiveWorker(warning: warning) }
        if !facts.due {
            return facts.backoffUntil.map { .backingOff(until: $0, reason: facts.backoffReason) }
        }
        if facts.hostRunning >= facts.hostLimit {
            return .hostLimit(host: facts.host, running: facts.hostRunning, limit: facts.hostLimit)
        }
        return .lanesBusy(running: facts.fleetRunning, workers: facts.liveWorkers)
    }

    /// Why a transfer waits when no worker is alive though the last one stopped only moments
    /// ago (so `WorkerRegistry.noLiveWorkerWarning` says nothing yet).
    public static let noWorkerRunning = "no worker is running against this database now; start one with 'haul worker --storage DIR'"

    /// One line: `waits: …`, saying what would let it run (a list's note, the JSON `waiting`).
    public var text: String { "waits: " + detail }

    /// What holds the transfer and what would let it run, without `text`'s `waits:` (the
    /// `waiting:` line of `haul status`).
    public var detail: String {
        switch self {
        case .transferPaused(let id):
            return "it is paused; 'haul resume \(id)' lets it run"
        case .originPaused(let host):
            return "its origin \(host) is paused (limit 0); 'haul host-limit resume \(host)' lets it run"
        case .noLiveWorker(let warning):
            return warning
        case .backingOff(let until, let reason):
            return "backing off until \(until)" + (reason.map { " after: \($0)" } ?? "")
        case .hostLimit(let host, let running, let limit):
            return "its origin \(host) is at its limit (\(running)/\(limit) running); 'haul host-limit set \(host) N' raises it"
        case .lanesBusy(let running, let workers):
            return "all lanes are busy (\(running) segments running on \(workers) worker\(workers == 1 ? "" : "s"))"
        }
    }

    /// The reason's stable name, for scripts (`waiting_reason` in JSON): `paused`,
    /// `origin-paused`, `no-live-worker`, `backing-off`, `host-limit` or `lanes-busy`.
    public var code: String {
        switch self {
        case .transferPaused: return "paused"
        case .originPaused: return "origin-paused"
        case .noLiveWorker: return "no-live-worker"
        case .backingOff: return "backing-off"
        case .hostLimit: return "host-limit"
        case .lanesBusy: return "lanes-busy"
        }
    }
}
