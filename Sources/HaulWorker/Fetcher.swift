import Foundation
import HaulCore
import HaulHTTP
import HaulQueue

/// The fetcher role: claim a queued segment, stream its range, complete it.
struct Fetcher: LaneRole {
    let lane: Lane

    /// Claims and fetches one segment. - Returns: whether there was one.
    /// - Parameter pick: which segments it may take (`Lane.findWork`).
    func fetchOne(_ pick: SegmentLeases.Pick = .any) throws -> Bool {
        let config = shared.config
        let started = Date()
        let claimed = try database.run { conn in
            try SegmentLeases(conn, workerID: config.workerID, scope: config.scope, storage: config.storageIdentity).attempt(
                limit: 1, lease: config.lease, pick: pick)
        }
        shared.metrics.claimLatency.observe(Date().timeIntervalSince(started))
        guard let segment = claimed.segments.first else {
            if claimed.hostContended { lane.contended = true }
            return false
        }
        lane.priority = segment.transfer.priority
        // More segments may wait (a resumed transfer): one more lane that starts on demand looks.
        shared.laneStart.signalOne()
        lane.tookWork()
        SegmentRun(shared: shared, stream: stream, http: http, database: database).fetch(segment)
        return true
    }

    /// Nothing queued: help the slowest running segment by taking half of what it has left,
    /// beyond what its worker may already have received or will receive before it learns of
    /// the cut, so that no byte is fetched twice: two checkpoints' worth, and what a quarter
    /// second brings while the checkpoint that tells it is synced and recorded (at 1 GB/s, cuts
    /// 20–40 MiB short of that were fetched twice: a 16 MiB sync on a busy disk takes that
    /// long, and the origin keeps filling the sockets meanwhile). Neither half is smaller than
    /// 4 MiB, nor than what the segment's rate fetches in a quarter second.
    /// - Returns: whether a segment was split (its cut-off piece is claimable once the holder knows).
    func splitStraggler() throws -> Bool {
        let config = shared.config
        return try database.run { conn in
            try SegmentLeases(conn, workerID: config.workerID, scope: config.scope).splitStraggler(
                minimumPiece: 4 << 20, minimumTime: 0.25, headroom: 2 * config.checkpointBytes,
                checkpointInterval: min(config.checkpointInterval, config.heartbeat), checkpointLatency: 0.25)
        }
    }
}

/// One attempt at one segment, shared by the fetcher and by the planner after its probe.
struct SegmentRun {
    let shared: WorkerShared
    let stream: SegmentStream
    let http: HTTPClient
    let database: ResilientConnection

    /// Streams the rest of `segment` with a fresh ranged request and settles its row.
    func fetch(_ segment: ClaimedSegment) {
        // A transfer with mirrors or piece digests: the mirror, and the check of each piece (MirrorRoute).
        let route = MirrorRoute(segment)
        let segment = route?.segment ?? segment
        settle(segment, route: route) {
            try stream.begin(segment)
            let resumed = stream.current ?? segment
            let first = resumed.offset + resumed.bytesDone
            let info = segment.transfer
            let pins = route?.pinsValidators ?? true
            var request = shared.request(
                for: info, first: info.acceptsRanges ? first : nil, last: info.acceptsRanges ? segment.lastByte : nil,
                ifRange: info.acceptsRanges && pins ? Self.validator(info) : nil, bodyCap: info.size == nil ? shared.planLimits(for: info) : nil)
            request.url = route?.url ?? info.url
            // A crawl is judged over the lowest-speed time, and not at all when that rule is off.
            try route.map { route in try database.run { try route.begin(first: first, window: request.lowestSpeed?.seconds, $0) } }
            try http.fetch(
                request,
                onHead: { head in
                    if info.acceptsRanges {
                        let pinned = PinnedVersion(size: info.size, etag: pins ? info.etag : nil, lastModified: pins ? info.lastModified : nil)
                        let check = { try RangeCheck.validate(head, first: first, last: segment.lastByte, pinned: pinned, url: request.url) }
                        try route?.validate(check) ?? check()
                    } else if head.status != 200 {
                        throw StatusPolicy.error(for: head, url: request.url)
                    }
                },
                onData: { bytes in
                    try route?.feed(bytes)
                    try stream.accept(bytes)
                }, shouldContinue: { !shared.isStopping() && stream.keepAlive() })
        }
    }

    /// Runs `body`, then completes the segment or files its failure the way its error says;
    /// `route` (a transfer with mirrors or pieces) learns how the attempt went.
    func settle(_ segment: ClaimedSegment, route: MirrorRoute? = nil, _ body: () throws -> Void) {
        let fields = stream.fields(segment)
        do {
            do {
                do {
                    try body()
                } catch {
                    // A stop learned while the origin was quiet explains the interruption.
                    throw stream.stopReason ?? error
                }
            } catch is SegmentEnded {
                Log.debug("segment was split; this part is done", fields)
            }
            try stream.complete()
            if let route { database.bestEffort("count the bytes of segment \(segment.id) on its mirror") { try route.succeeded($0) } }
            Log.debug("segment done", fields)
        } catch is YieldRequested {
            stream.yieldRest()
            shared.metrics.segmentsYielded.increment()
            Log.debug("segment given back to work that waits for a lane; its bytes are kept", fields)
        } catch is LeaseLost {
            stream.abandon()
            Log.warning("lease lost, another worker has the segment now; stopped", fields)
        } catch let stop as TransferStopped {
            stream.release()
            Log.info("transfer \(stop.state.rawValue), segment released", fields)
        } catch let error as HaulError where StartingOver.applies(to: error) {
            stream.abandon()
            StartingOver.report(error, by: .segment(segment), database: database, workerID: shared.config.workerID, fields: fields)
        } catch let error as HaulError where error.code == .interrupted && shared.isStopping() {
            stream.release()
        } catch let error as HaulError {
            let filed = route?.filed(error) ?? error
            stream.fail(filed)
            if let route {
                database.bestEffort("record the failure of segment \(segment.id) on its mirror") { conn in
                    shared.metrics.mirrorFailed(demoted: try route.failed(error, backoff: shared.config.backoff, conn))
                }
            }
        } catch {
            stream.fail(HaulError(.`internal`, "\(error)", transient: true))
        }
    }

    /// The `If-Range` validator: a strong ETag, else `Last-Modified`.
    static func validator(_ info: TransferInfo) -> String? {
        if let etag = info.etag, ResponseHead.isStrong(etag: etag) { return etag }
        return info.lastModified
    }
}
