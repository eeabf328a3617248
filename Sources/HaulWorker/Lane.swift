import Foundation
import HaulHTTP
import HaulQueue

/// One worker thread's own resources: a turn on the lanes' database connections, a segment stream (with its
/// reusable write buffer) and a libcurl handle (which keeps connections to origins alive).
/// A lane plays every role it is allowed: for a file that fits in one segment the probe is the
/// whole download and finalizing follows at once, so thousands of small files go as fast as
/// the lanes, not as fast as one planner or one finalizer thread.
final class Lane {
    let shared: WorkerShared
    let database: ResilientConnection
    let stream: SegmentStream
    let http = HTTPClient()
    /// For `BatchProbe`: many small files at once on this lane's thread.
    let multi = MultiClient()

    /// Whether this lane's last step found nothing: its next one asks `WorkProbe` first.
    private var idle = false
    /// Whether a claim of this step took nothing because another claimer held the row of a
    /// host with room (`HostLimits.lockedSlots` never waits for it): the step then says
    /// `.contended`, and the lane looks again shortly rather than idling.
    var contended = false
    /// The priority of the segment or batch this lane took last: what it looks for first on
    /// origins that hold no slot is of no lower one (`findWork`).
    var priority = 0
    /// When this lane last looked first for the work of an origin that holds no slot.
    private var lookedAtIdleHosts = Date.distantPast
    /// Whether the last batch this lane took left files of its origin pending: the lane looks
    /// there first next, for those files (another lane may take them at the same time).
    var leftPending = false

    init(shared: WorkerShared) {
        self.shared = shared
        database = shared.laneDatabase()
        stream = SegmentStream(shared: shared, database: database)
    }

    /// One unit of work: a transfer to finalize first (a file whose bytes are all in is
    /// published before more of the backlog is fetched, so it never waits for the queue to
    /// empty), else a queued segment (finishing started files), else a pending transfer to
    /// plan, else half of a straggling segment. First, though, the work of an origin that holds
    /// no slot (a pending transfer, then a queued segment), of no lower priority than the lane's
    /// last: after a segment given back to such work (`FairShare`), and else at most once per
    /// `--yield-after` (`looksAtIdleHostsFirst`). A stop asked for meanwhile ends the search
    /// before the next role's query. After a step that found nothing, one cheap statement
    /// (`WorkProbe`) tells first whether any of those queries could find something.
    func step() throws -> StepOutcome {
        if idle, try !database.run({ conn in try WorkProbe.anythingToDo(conn) }) { return .nothingAnywhere }
        contended = false
        idle = try !findWork()
        return idle ? (contended ? .contended : .nothingDue) : .worked
    }

    private func findWork() throws -> Bool {
        let roles = shared.config.roles
        let fetcher = Fetcher(lane: self)
        let planner = Planner(lane: self)
        if looksAtIdleHostsFirst(), !shared.isStopping() {
            let floor = priority
            if roles.contains(.planner), try planner.planOne(idleHostsFrom: floor) {
                shared.progress.announceSettled()
                return true
            }
            if roles.contains(.fetcher), try fetcher.fetchOne(idleHostsFrom: floor) { return true }
        }
        // A finalized or planned transfer may be final now (done, failed): `haul get` hears of it at once.
        if roles.contains(.finalizer), !shared.isStopping(), try Finalizer(lane: self).finalizeOne() {
            shared.progress.announceSettled()
            return true
        }
        if roles.contains(.fetcher), !shared.isStopping(), try fetcher.fetchOne() { return true }
        if roles.contains(.planner), !shared.isStopping(), try planner.planOne() {
            shared.progress.announceSettled()
            return true
        }
        if roles.contains(.fetcher), !shared.isStopping(), try fetcher.splitStraggler() { return true }
        return false
    }

    /// Whether this step looks first for the work of an origin that holds no slot: after a
    /// segment given back to it (`FairShare`), and else once per `--yield-after` at most (never
    /// when it is off). In the queue's order the queued segments of a big download come before
    /// another origin's pending files, so every lane that finished one of its segments took
    /// the next: small files of another origin waited for a yield (a segment streamed for a
    /// second, its rest worth more than a second), or for the download's last segment. Looking
    /// first, the next lane to finish a segment or a batch takes them; it costs at most two
    /// claims a lane and `--yield-after`, and one after a batch that left files of its origin:
    /// lanes that free up would otherwise take the download's segments back between batches.
    private func looksAtIdleHostsFirst() -> Bool {
        let yielded = stream.takeYielded()
        let again = leftPending
        leftPending = false
        guard let budget = shared.config.yieldAfter else { return yielded }
        let now = Date()
        guard yielded || again || now.timeIntervalSince(lookedAtIdleHosts) >= budget else { return false }
        lookedAtIdleHosts = now
        return true
    }
}

/// A role that works with its lane's resources (`Fetcher`, `Planner`, `Finalizer`).
protocol LaneRole {
    var lane: Lane { get }
}

extension LaneRole {
    var shared: WorkerShared { lane.shared }
    var database: ResilientConnection { lane.database }
    var stream: SegmentStream { lane.stream }
    var http: HTTPClient { lane.http }
}
