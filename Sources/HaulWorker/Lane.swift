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

    /// Whether this lane's last step found nothing: its next one asks `WorkProbe` first, and
    /// runs only the claims that could find what it found.
    private var idle = false
    /// Whether a claim of this step took nothing because other claimers held the row of every
    /// host with room (`HostLimits.claimHost` never waits for one): the step then says
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
    /// Whether this step began idle (a lane woken, or the poller's look) and has not yet passed
    /// the wake-up on (`tookWork`).
    private var passesWakeOn = false

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
    /// `--yield-after` (`precedence`). After a segment given back, or a batch that left files of
    /// its origin pending, the work of a transfer that holds no lane also goes before the queued
    /// segments: the waiting work may be of the lane's own origin, behind its big download's
    /// segments in the queue's order. A stop asked for meanwhile ends the search
    /// before the next role's query. After a step that found nothing, one cheap statement
    /// (`WorkProbe`) tells first which of those queries could find something, and only those run.
    func step() throws -> StepOutcome {
        var kinds = WorkProbe.Kinds.all
        if idle {
            kinds = try database.run { conn in try WorkProbe.whatToDo(conn) }
            if kinds.isEmpty { return .nothingAnywhere }
        }
        contended = false
        passesWakeOn = idle
        idle = try !findWork(kinds)
        if !idle { tookWork() }
        return idle ? (contended ? .contended : .nothingDue) : .worked
    }

    /// Called once a claim of this step took work, before the work is done: a lane that was idle
    /// wakes one more idle lane of its worker, which wakes the next only if it takes work too. A
    /// notice of work (NOTIFY, slots given back) so costs one look per worker while there is no
    /// more to take, not one per lane, and all lanes still start within a claim of each other.
    func tookWork() {
        guard passesWakeOn else { return }
        passesWakeOn = false
        shared.announceWorkForOne()
    }

    private func findWork(_ kinds: WorkProbe.Kinds) throws -> Bool {
        let claims = Self.claims(roles: shared.config.roles, kinds: kinds)
        let fetcher = Fetcher(lane: self)
        let planner = Planner(lane: self)
        let first = precedence()
        if first.idleHosts, !shared.isStopping() {
            let floor = priority
            if claims.contains(.plan), try planner.planOne(idleHostsFrom: floor) {
                shared.progress.announceSettled()
                return true
            }
            if claims.contains(.fetch), try fetcher.fetchOne(.idleHosts(from: floor)) { return true }
        }
        // A finalized or planned transfer may be final now (done, failed): `haul get` hears of it at once.
        if claims.contains(.finalize), !shared.isStopping(), try Finalizer(lane: self).finalizeOne() {
            shared.progress.announceSettled()
            return true
        }
        var plan = claims.contains(.plan)
        if first.idleTransfers, !shared.isStopping() {
            if plan {
                plan = false  // asked once a step
                if try planner.planOne() {
                    shared.progress.announceSettled()
                    return true
                }
            }
            if claims.contains(.fetch), try fetcher.fetchOne(.idleTransfers(from: priority)) { return true }
        }
        if claims.contains(.fetch), !shared.isStopping(), try fetcher.fetchOne() { return true }
        if plan, !shared.isStopping(), try planner.planOne() {
            shared.progress.announceSettled()
            return true
        }
        if claims.contains(.split), !shared.isStopping(), try fetcher.splitStraggler() { return true }
        return false
    }

    /// What a step looks for before the queue's order (priority, then age).
    struct Precedence: Equatable {
        /// The work of an origin that holds no slot, of no lower priority than the lane's last.
        var idleHosts = false
        /// The work of a transfer that holds no lane (a pending one, then a queued segment of a
        /// downloading one with none running), before the queued segments of those that hold some.
        var idleTransfers = false
    }

    /// What this step looks for first: the work of an origin that holds no slot after a segment
    /// given back to it (`FairShare`), and else once per `--yield-after` at most (never when it is
    /// off). In the queue's order the queued segments of a big download come before another
    /// origin's pending files, so every lane that finished one of its segments took the next:
    /// small files of another origin waited for a yield (a segment streamed for a second, its
    /// rest worth more than a second), or for the download's last segment. Looking first, the
    /// next lane to finish a segment or a batch takes them; it costs at most two claims a lane
    /// and `--yield-after`, and one after a batch that left files of its origin: lanes that free
    /// up would otherwise take the download's segments back between batches.
    ///
    /// After a segment given back, or a batch that left files pending, the work of a transfer
    /// that holds no lane also goes before the queued segments: a yield may be for a transfer of
    /// the lane's own origin (`WaitingWork`), which the queue's order puts behind that origin's
    /// big download, and a batch of small files keeps its lane while some are left rather than
    /// handing it back to a big download of its origin.
    private func precedence() -> Precedence {
        let yielded = stream.takeYielded()
        let again = leftPending
        leftPending = false
        guard let budget = shared.config.yieldAfter else { return Precedence(idleHosts: yielded, idleTransfers: yielded) }
        let now = Date()
        let idleTransfers = yielded || again
        guard idleTransfers || now.timeIntervalSince(lookedAtIdleHosts) >= budget else { return Precedence() }
        lookedAtIdleHosts = now
        return Precedence(idleHosts: true, idleTransfers: idleTransfers)
    }

    /// A claim statement of a lane's step.
    enum Claim {
        case finalize, fetch, plan, split
    }

    /// The claims a lane of `roles` runs when `WorkProbe` found `kinds`: each only when there is
    /// something of its kind (a finalizing transfer, a queued segment, a pending transfer, a
    /// running segment to split). Pure.
    static func claims(roles: Set<Role>, kinds: WorkProbe.Kinds) -> Set<Claim> {
        var claims: Set<Claim> = []
        if roles.contains(.finalizer), kinds.contains(.finalizingTransfers) { claims.insert(.finalize) }
        if roles.contains(.fetcher), kinds.contains(.queuedSegments) { claims.insert(.fetch) }
        if roles.contains(.planner), kinds.contains(.pendingTransfers) { claims.insert(.plan) }
        if roles.contains(.fetcher), kinds.contains(.runningSegments) { claims.insert(.split) }
        return claims
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
