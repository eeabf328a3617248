import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// The planner role: probe a pending transfer with its first segment's own ranged GET, write the
/// segment rows, and keep streaming that response as segment 0 (no separate HEAD round trip).
struct Planner: LaneRole {
    let lane: Lane

    /// Plans pending transfers of one origin: one on its own (streaming its first segment), or
    /// up to `--probe-batch` at once as a `BatchProbe` over up to `--concurrency` connections.
    /// - Returns: whether there were any.
    /// - Parameter idleHostsFrom: only of an origin that holds no slot, of this priority or
    ///   higher (`Lane.findWork`).
    func planOne(idleHostsFrom: Int? = nil) throws -> Bool {
        let config = shared.config
        let batch = try database.run { conn in
            try TransferLeases(conn, workerID: config.workerID, scope: config.scope).claimPlanning(
                lease: config.lease, limit: config.probeBatch, connections: config.concurrency, idleHostsFrom: idleHostsFrom)
        }
        guard !batch.claims.isEmpty else {
            if batch.hostContended { lane.contended = true }
            return false
        }
        lane.priority = batch.claims[0].info.priority
        lane.leftPending = batch.morePending
        lane.tookWork()
        if batch.morePending { shared.announceWorkForOne() }
        let live = batch.claims.filter { !shared.failIfAbandoned($0, phase: "planning", database: database) }
        // The batch's connections are its live rows that hold a slot: an abandoned one's went with it.
        let connections = live.filter(\.holdsSlot).count
        guard let first = live.first else { return true }
        if connections == 0 {
            giveBack(live)
        } else if live.count == 1 {
            try plan(first)
        } else {
            try BatchProbe(lane: lane).run(live, connections: connections)
        }
        return true
    }

    /// Hands claims back to `pending` unprobed: no slot of theirs is left to open a connection with.
    private func giveBack(_ claims: [TransferLeases.Claim]) {
        let config = shared.config
        database.bestEffort("give back \(claims.count) claims left without a host slot") { conn in
            for claim in claims { try TransferLeases(conn, workerID: config.workerID).release(claim) }
        }
    }

    /// Probes `claim` with its first segment's ranged GET and keeps streaming it as segment 0.
    /// A transfer with mirrors is probed on them in priority order until one answers.
    func plan(_ claim: TransferLeases.Claim) throws {
        let config = shared.config
        let info = claim.info
        let requestedLast = config.backend.firstSegment(requested: info.segmentSize) - 1
        var result: TransferLeases.PlanResult?
        var failure: Error?
        let onStorage = Planner.fileOnStorage(info, config: config)
        let recorded =
            ConditionalProbe.usesRecord(info, onStorage: onStorage)
            ? try database.run { conn in try TransferLeases(conn, workerID: config.workerID).previousVersion(of: claim) } : nil
        let previous = ConditionalProbe.baseline(recorded: recorded, onStorage: onStorage, info: info, config: config)
        // Read once (a `statvfs`): they cap the probe's body and bound its plan.
        let limits = shared.planLimits(for: info)
        var request = shared.request(for: info, first: 0, last: requestedLast, bodyCap: limits)
        ConditionalProbe.ask(&request, ifChangedSince: previous)
        var unchanged = false
        var route: MirrorRoute?
        let targets = try probeTargets(info)
        // The host where the claim's row holds its slot; a probe elsewhere takes a slot there first.
        var slotHost = claim.holdsSlot ? info.host : nil
        // A mirror's host that was at its limit: the transfer waits for it rather than failing.
        var waitsFor: String?
        for (n, target) in targets.enumerated() {
            if target.host != slotHost {
                do {
                    guard try holdSlot(claim, at: target.host) else {
                        waitsFor = target.host
                        continue
                    }
                } catch {
                    (failure, waitsFor) = (error, nil)
                    break
                }
                slotHost = target.host
            }
            request.url = target.url
            // A failure before the head is accepted (no connection, an error status, a timeout) is the mirror's.
            var mirrorsFault = true
            do {
                try http.fetch(
                    request,
                    onHead: { head in
                        let outcome = try ProbeOutcome.classify(head, requestedLast: requestedLast, url: target.url)
                        mirrorsFault = false
                        if outcome == .notModified || ConditionalProbe.notNewer(head, than: previous, info: info) {
                            let kept = try ConditionalProbe.unchanged(head, previous: previous)
                            unchanged = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).finishUnchanged(claim, kept: kept) }
                            return
                        }
                        var proposed = try Self.plan(
                            outcome, head: head, info: info, storage: config.storage,
                            occupant: { try config.backend.occupant(of: $0, url: info.url) }, limits: limits,
                            names: shared.originNames, probed: target.url)
                        proposed.probedMirror = target.mirror
                        let plan = try config.placed(proposed, info: info)
                        let written = try record(plan, of: claim, keepFirst: true)
                        result = written
                        switch written {
                        case .lost: throw LeaseLost()
                        case .noSegments, .queued: break
                        case .firstSegment(let segment):
                            // This process's idle lanes take the other segments now, without the NOTIFY's round trip.
                            if plan.ranges.count > 1 { shared.announceWork() }
                            Log.info(
                                "planned",
                                [
                                    ("transfer", String(info.id)), ("size", plan.size.map(String.init) ?? "unknown"),
                                    ("segments", String(plan.ranges.count)), ("dest", plan.dest),
                                ])
                            try stream.begin(segment)
                            // Segment 0 of a transfer with piece digests is checked as any other (MirrorRoute).
                            route = MirrorRoute(segment)
                            try route.map { route in try database.run { try route.begin(first: segment.offset, window: request.lowestSpeed?.seconds, $0) } }
                        }
                    },
                    onData: { bytes in
                        guard case .firstSegment = result else { return }
                        try route?.feed(bytes)
                        try stream.accept(bytes)
                    }, shouldContinue: { !shared.isStopping() && stream.keepAlive() })
                failure = nil
            } catch {
                failure = error
            }
            // A mirror that failed the probe: counted on it, and the next one is probed in the same attempt.
            guard result == nil, !unchanged, let failure, let mirror = target.mirror, !shared.isStopping() else { break }
            let haulError = failure as? HaulError
            guard mirrorsFault || haulError?.code == .sizeMismatch else {
                waitsFor = nil
                break
            }
            probeFailed(claim, mirror: mirror, url: target.url, error: haulError, proof: !mirrorsFault)
            guard n + 1 < targets.count else { break }
            Log.warning(
                "mirror \(OriginURL.hostKey(target.url)) failed the probe, trying the next: \(haulError?.message ?? "\(failure)")",
                [("transfer", String(info.id))])
        }
        if unchanged {
            Log.info("unchanged at the origin (304); kept the file", [("transfer", String(info.id))])
            return
        }
        switch result {
        case .firstSegment(let segment):
            SegmentRun(shared: shared, stream: stream, http: http, database: database).settle(segment, route: route) {
                if let failure { throw failure }
            }
        case .noSegments:
            Log.info("planned an empty file", [("transfer", String(info.id))])
        case .queued:
            break  // only when segment 0 is not kept
        case .lost:
            Log.warning("planning lease lost; another worker plans it", [("transfer", String(info.id))])
        case nil:
            if let waitsFor, !unchanged, !shared.isStopping() {
                deferProbe(claim, waitingFor: waitsFor)
            } else {
                planningFailed(claim, error: failure)
            }
        }
    }

    /// Has `claim` hold a slot of `host` for a probe there (`TransferLeases.holdProbeSlot`).
    /// - Returns: false when `host` is at its limit.
    private func holdSlot(_ claim: TransferLeases.Claim, at host: String) throws -> Bool {
        let config = shared.config
        return try database.run { conn in try TransferLeases(conn, workerID: config.workerID).holdProbeSlot(claim, host: host) }
    }

    /// Hands `claim` back, no attempt spent, to be probed again after the usual first backoff:
    /// the mirrors it has left are on hosts at their limits (such as `host`).
    private func deferProbe(_ claim: TransferLeases.Claim, waitingFor host: String) {
        let config = shared.config
        Log.info("every mirror left to probe is on a host at its limit (\(host)); probing later", [("transfer", String(claim.info.id))])
        database.bestEffort("hand back transfer \(claim.info.id) until a mirror's host has a free slot") { conn in
            try TransferLeases(conn, workerID: config.workerID).deferProbe(claim, delay: config.backoff.base)
        }
    }

    /// Where the probe of `info` may go, in order, with the host each counts at: a transfer with
    /// mirrors, its mirrors that neither rest nor are demoted, by priority (none such: its own
    /// URL); else its own URL.
    private func probeTargets(_ info: TransferInfo) throws -> [(mirror: Int?, url: String, host: String)] {
        guard info.mirrored else { return [(nil, info.url, info.host)] }
        let mirrors = try database.run { conn in try TransferStore(conn).mirrors(of: info.id) }
        let usable = mirrors.filter { $0.state == "healthy" || $0.state == "trial" }.map {
            (mirror: Optional($0.index), url: $0.url, host: $0.index == 0 ? info.host : OriginURL.hostKey($0.url))
        }
        return usable.isEmpty ? [(0, info.url, info.host)] : usable
    }

    /// Counts a failed probe on its mirror as `MirrorRoute.failed` counts a segment's attempt
    /// (`haul_mirror_failed`, of no segment): another size (`proof`) demotes it, an error no
    /// retry mends or a third failure in a row rests it.
    private func probeFailed(_ claim: TransferLeases.Claim, mirror: Int, url: String, error: HaulError?, proof: Bool) {
        let config = shared.config
        let reason = SafeText.cleanLine(error?.message ?? "the probe of \(OriginURL.hostKey(url)) failed")
        database.bestEffort("count the failed probe on mirror \(mirror) of transfer \(claim.info.id)") { conn in
            try conn.query(
                Statements.MirrorRoute.failed,
                [
                    nil as Int64?, claim.info.id, mirror, proof, !(error?.isTransient ?? true), reason, Int64(0), Int64.max,
                    config.backoff.base, config.backoff.cap, Double.random(in: 0..<1),
                ])
        }
    }

    /// Writes `plan` and its segment rows (reserving the inplace file first).
    func record(_ plan: TransferLeases.Plan, of claim: TransferLeases.Claim, keepFirst: Bool) throws -> TransferLeases.PlanResult {
        let config = shared.config
        if claim.info.options.localTarget == nil {
            // Before the partial file is made: another transfer's of that name must not be touched,
            // nor a file this one may not replace (a get's command and plan have checked its own).
            if claim.info.dest == nil {
                try database.run { conn in try TransferLeases(conn, workerID: config.workerID).refuseBusyName(plan.dest, of: claim) }
            }
            try OthersFiles.refuse(plan.dest, of: claim, config: config, database: database)
        }
        guard try prepare(plan, of: claim) else { return .lost }
        let result = try database.run { conn in
            try TransferLeases(conn, workerID: config.workerID).writePlan(claim, plan: plan, lease: config.lease, keepFirst: keepFirst)
        }
        // Every segment queued: this process's idle lanes take them without the NOTIFY's round trip.
        if case .queued = result { shared.announceWork() }
        return result
    }

    /// Has the storage ready the planned file (`Storage.prepare`) and records what it made under
    /// the planning lease: an upload it opened, after the intent to open it (which a sweep reads
    /// should this die in between). - Returns: false if the lease was lost (what was made is undone).
    private func prepare(_ plan: TransferLeases.Plan, of claim: TransferLeases.Claim) throws -> Bool {
        let backend = shared.config.backend
        let info = claim.info
        let planned = PlannedFile(
            dest: plan.dest, generation: claim.generation, url: info.url, size: plan.size, unknownLength: plan.unknownLength,
            hasSegments: !plan.ranges.isEmpty, inplace: info.layout == .inplace, contentType: plan.contentType, earlierUploadID: info.objectUploadID,
            earlierDest: info.dest, holding: shared.heldPartials(for: info))
        var intent: Int64?
        let prepared = try backend.prepare(planned) { wanted in
            intent = try database.run(patient: false) { conn in try ObjectUploads.intend(conn, bucket: wanted.container, key: wanted.name) }
        }
        guard let uploadID = prepared.uploadID else { return true }
        let recorded = try database.run(patient: false) { conn in try TransferLeases(conn, workerID: "").recordObjectUpload(claim, uploadID: uploadID) }
        if let intent { try? database.run(patient: false) { conn in try ObjectUploads.settle(conn, intent: intent) } }
        if !recorded { backend.abandon(prepared) }
        return recorded
    }

    /// A probe that failed: the transfer is retried after a backoff (or fails after its last
    /// attempt); a stopping worker hands it back untouched.
    func planningFailed(_ claim: TransferLeases.Claim, error: Error?) {
        let config = shared.config
        let fields = [("transfer", String(claim.info.id))]
        if shared.isStopping() {
            database.bestEffort("hand back transfer \(claim.info.id)") { conn in try TransferLeases(conn, workerID: config.workerID).release(claim) }
            return
        }
        // A partial file another process holds locked is retried on a fleet worker (`LockedPartial`).
        let met = error.map { LockedPartial.asMet($0, scope: config.scope) }
        let haulError = (met as? HaulError) ?? HaulError(.`internal`, "\(met.map { "\($0)" } ?? "probe ended without a response")", transient: true)
        let attempts = claim.attempts
        let delay = config.backoff.delay(afterAttempt: attempts, retryAfter: haulError.retryAfter, jitter: Double.random(in: 0..<1))
        database.bestEffort("record the planning failure of transfer \(claim.info.id)") { conn in
            try TransferLeases(conn, workerID: config.workerID).postpone(
                claim, error: haulError, retryAfter: delay, attempts: attempts, maxAttempts: claim.info.options.maxAttempts ?? config.maxAttempts)
        }
        if haulError.isTransient && attempts < (claim.info.options.maxAttempts ?? config.maxAttempts) {
            Log.warning("retrying in \(Int(delay.rounded(.up))) s: \(haulError.message)", fields)
        } else {
            Log.warning("probe failed: \(haulError.description)", fields)
        }
    }

    /// Turns a probe's outcome into segment ranges and a destination, within `limits` (a file
    /// too large is refused, segments grow to stay under the cap). Pure apart from naming: a
    /// name the origin gives a get's file is taken in `names` (refused when another transfer of
    /// this process saves that file), and refused when the get keeps existing files and one is
    /// there (`occupant` looks at a destination where the transfer's files go: a batch's
    /// storage keeps what it saw there for the file's own store, a bucket's `PutObject`).
    /// `probed`: the URL that answered (a mirror's; `nil`: the transfer's own).
    static func plan(
        _ outcome: ProbeOutcome, head: ResponseHead, info: TransferInfo, storage: StorageRoot, occupant: (String) throws -> Occupant?,
        limits: PlanLimits, names: OriginNames, probed: String? = nil
    ) throws -> TransferLeases.Plan {
        let dest = try info.dest ?? name(head: head, url: info.url)
        if info.dest == nil {
            // A get's names are kept apart here; a fleet transfer's by `writePlan`, against every worker's.
            if info.options.localTarget != nil, let holder = names.take(storage.path + "/" + dest, for: info.id) {
                throw HaulError(
                    .destinationBusy, "'\(storage.path)/\(dest)' is the file transfer \(holder) saves too: the origin names both alike",
                    hint: "give each URL its own -o FILE, or get them one at a time")
            }
            if info.options.keepExisting == true { try refuseExisting(dest, of: info, found: try occupant(dest)) }
        }
        let host = info.host
        let etag = head.etag
        let lastModified = head["last-modified"]
        let type = head["content-type"]
        switch outcome {
        case .ranged(let size):
            try limits.check(size: size)
            try MirrorSizes.check(size, of: info, from: probed)
            let wanted = info.options.automaticSegments == true ? SegmentPlan.automaticSegmentSize(fileSize: size) : info.segmentSize
            var rest = PlanLimits.segmentSize(fileSize: size, first: info.segmentSize, rest: wanted)
            // Segments of a transfer with piece digests end where pieces do (the first is a multiple already).
            if let piece = info.pieceLength { rest = (rest + piece - 1) / piece * piece }
            var plan = TransferLeases.Plan(
                dest: dest, host: host, size: size, etag: etag, lastModified: lastModified, contentType: type, acceptsRanges: true,
                ranges: SegmentPlan(size: size, firstSegment: info.segmentSize, segmentSize: rest).ranges, unknownLength: false)
            if info.options.ignoreMirrorHeaders != true {
                plan.mirrors = MirrorHeaders.duplicates(head["link"], base: info.url)
                plan.digest = MirrorHeaders.digest(head["digest"])
            }
            return plan
        case .whole(let length):
            if let length { try limits.check(size: length) }
            try MirrorSizes.check(length, of: info, from: probed)
            return .init(
                dest: dest, host: host, size: length, etag: etag, lastModified: lastModified, contentType: type, acceptsRanges: false,
                ranges: [SegmentPlan.Range(offset: 0, length: length ?? 0)], unknownLength: length == nil)
        case .notModified:
            throw HaulError(.`internal`, "a 304 answer reached planning")
        case .empty:
            // A 416's type is its error page's, not the file's.
            return .init(
                dest: dest, host: host, size: 0, etag: etag, lastModified: lastModified, contentType: head.status == 416 ? nil : type,
                acceptsRanges: false, ranges: [],
                unknownLength: false)
        }
    }

    /// `haul get` without `--force`: a name that came from the origin must not replace a file
    /// that is there already (`found`), unless an earlier get of the
    /// same URL saved it: the mark `OthersFiles.at` reads, or, where there are no marks, the
    /// names earlier gets saved (`replaceable`).
    static func refuseExisting(_ dest: String, of info: TransferInfo, found: Occupant?) throws {
        let savedBefore = { (info.options.replaceable ?? []).contains { $0.sameBytes(as: dest) } }
        guard let target = try OthersFiles.judge(found, wroteBefore: savedBefore) else { return }
        throw OthersFiles.getRefusal(target)
    }

    /// The size of the transfer's destination file on this worker's storage, if it exists.
    static func fileOnStorage(_ info: TransferInfo, config: WorkerConfig) -> Int64? {
        guard let dest = info.dest, let clean = try? SafePath.validate(dest) else { return nil }
        return (try? config.backend.probe(clean))??.size
    }

    /// Names a file like `curl -OJ`: a sanitised `Content-Disposition` filename, else the URL's last path segment.
    static func name(head: ResponseHead, url: String) throws -> String {
        let suggested =
            head["content-disposition"].flatMap(ContentDisposition.filename)
            ?? OriginURL.lastPathSegment(url).flatMap(ContentDisposition.sanitize)
            ?? "index.html"
        do {
            return try SafePath.validateDestination(suggested, what: "the file name the origin suggested")
        } catch let error as HaulError {
            // The user cannot change the origin's name, only give one of their own.
            throw HaulError(error.code, error.message, hint: "name the file yourself with -o FILE (haul get) or --dest (haul enqueue)")
        }
    }
}
