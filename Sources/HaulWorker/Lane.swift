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

    init(shared: WorkerShared) {
        self.shared = shared
        database = shared.laneDatabase()
        stream = SegmentStream(shared: shared, database: database)
    }

    /// One unit of work: a transfer to finalize first (a file whose bytes are all in is
    /// published before more of the backlog is fetched, so it never waits for the queue to
    /// empty), else a queued segment (finishing started files), else a pending transfer to
    /// plan, else half of a straggling segment; after a segment given back to waiting work
    /// (`FairShare`), first the work of an origin that holds no slot (a pending transfer, then
    /// a queued segment), which it was given back for. A stop asked for meanwhile ends the search
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
        if stream.takeYielded(), !shared.isStopping() {
            if roles.contains(.planner), try planner.planOne(idleHostsOnly: true) {
                shared.progress.announceSettled()
                return true
            }
            if roles.contains(.fetcher), try fetcher.fetchOne(idleHostsOnly: true) { return true }
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
