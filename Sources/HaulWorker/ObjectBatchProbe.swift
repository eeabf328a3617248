import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulS3

/// `BatchProbe` on S3 storage: a batch of pending transfers of one origin probed together over
/// the lane's `MultiClient`. A file below S3's part minimum that its probe's response holds
/// whole streams from that response straight into one `PutObject` (nothing spooled, a few
/// hundred KiB of socket buffer per file), and the batch records it done with the others in one
/// transaction. Anything else gets its plan written for the fetchers, as a lone probe would.
///
/// The fence of each `PutObject`: its last byte goes out only when this worker knows that it
/// still holds the planning lease, from a renewal the database confirmed less than half a lease
/// ago (on the monotonic clock: a worker that was frozen finds its renewal stale, asks again and
/// learns that the lease is gone). The request's precondition (`S3Precondition`) covers a freeze
/// between that check and the last byte: it never replaces an object it did not see at its start.
struct ObjectBatchProbe: LaneRole {
    let lane: Lane
    let store: ObjectStore

    /// Probes `claims` over at most `connections` connections at once, then settles them.
    func run(_ claims: [TransferLeases.Claim], connections: Int) throws {
        let config = shared.config
        let previous = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).previousVersions(of: claims) }
        let leases = try BatchLeases(claims: claims, database: database, config: config)
        let probes = claims.map { claim in
            ObjectProbe(
                claim: claim, store: store, leases: leases,
                previous: ConditionalProbe.baseline(recorded: previous[claim.info.id], info: claim.info, config: config))
        }
        lane.multi.run(
            probes.map { $0.job(shared: shared) }, connections: connections,
            shouldContinue: {
                guard !shared.isStopping() else { return false }
                leases.renewIfDue()
                return true
            },
            onFinish: { index, outcome in probes[index].end(outcome) })
        let planner = Planner(lane: lane)
        var done: [ObjectProbe] = []
        for probe in probes {
            switch probe.settle() {
            case .whole, .unchanged: done.append(probe)
            case .handOff(let plan):
                do {
                    if case .lost = try planner.record(plan, of: probe.claim, keepFirst: false) {
                        Log.warning("planning lease lost; another worker plans it", probe.fields)
                    }
                } catch {
                    planner.planningFailed(probe.claim, error: error)
                }
            case .failed(let error): planner.planningFailed(probe.claim, error: error)
            case .lost: Log.warning("planning lease lost mid-probe; another worker has it", probe.fields)
            case .waiting: break  // never started (the worker is stopping): its lease runs out
            }
        }
        let finished = try database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: config.workerID).finish(probed: done.compactMap { $0.probedFile })
        }
        for probe in done {
            guard finished.contains(probe.claim.info.id) else {
                Log.warning("planning lease lost after storing the object; another worker fetches it again", probe.fields)
                continue
            }
            if probe.isUnchanged {
                Log.info("unchanged at the origin (304); kept the object", probe.fields)
            } else {
                Log.info("transfer done", probe.fields + [("dest", probe.plan?.dest ?? "")] + (probe.digest.map { [("digest", $0)] } ?? []))
            }
        }
    }
}

/// The planning leases of one batch, and when the database last confirmed them (lane thread only).
final class BatchLeases {
    private let claims: [TransferLeases.Claim]
    private let database: ResilientConnection
    private let config: WorkerConfig
    private var held: Set<Int64> = []
    /// `ProcessInfo.systemUptime` taken before the latest renewal was sent.
    private var renewedAt: TimeInterval = 0

    init(claims: [TransferLeases.Claim], database: ResilientConnection, config: WorkerConfig) throws {
        self.claims = claims
        self.database = database
        self.config = config
        try renew()
    }

    /// Renews the leases that are still held, and learns which those are.
    func renew() throws {
        let started = ProcessInfo.processInfo.systemUptime
        let config = config
        held = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).renew(claims, lease: config.lease) }
        renewedAt = started
    }

    /// Renews the leases once a heartbeat has passed since the last renewal.
    func renewIfDue() {
        if ProcessInfo.processInfo.systemUptime - renewedAt >= config.heartbeat { try? renew() }
    }

    /// Whether transfer `id`'s lease is certainly held for a while yet: confirmed less than half
    /// a lease ago, else asked again now.
    func isHeld(_ id: Int64) -> Bool {
        if ProcessInfo.processInfo.systemUptime - renewedAt >= config.lease / 2 {
            guard (try? renew()) != nil else { return false }
        }
        return held.contains(id)
    }
}

/// Thrown by a probe's head callback to drop a response the fetchers will ask for again.
private struct HandOff: Error {}

/// One transfer's probe in an S3 batch, as its response arrives (on the lane's thread only).
private final class ObjectProbe {
    let claim: TransferLeases.Claim
    let store: ObjectStore
    let leases: BatchLeases
    let previous: TransferLeases.PreviousVersion?
    private(set) var verdict = Verdict.waiting
    private(set) var plan: TransferLeases.Plan?
    private(set) var digest: String?
    private var upload: PartStream?
    private var heldByte: UInt8?
    private var digester: Digester?
    private var received: Int64 = 0
    private var limits = PlanLimits()

    enum Verdict {
        case waiting
        /// The whole file is in this response, streaming into its `PutObject`.
        case whole
        /// `304 Not Modified`: the object is current.
        case unchanged
        /// For the fetchers: the plan to write with every segment queued.
        case handOff(TransferLeases.Plan)
        /// Another worker holds the transfer now (or it was cancelled): leave it alone.
        case lost
        case failed(Error)
    }

    init(claim: TransferLeases.Claim, store: ObjectStore, leases: BatchLeases, previous: TransferLeases.PreviousVersion?) {
        self.claim = claim
        self.store = store
        self.leases = leases
        self.previous = previous
    }

    var fields: [(String, String)] { [("transfer", String(claim.info.id))] }
    var isUnchanged: Bool { if case .unchanged = verdict { true } else { false } }

    /// What `finish(probed:)` records, for a probe that finished its transfer.
    var probedFile: TransferLeases.ProbedFile? {
        guard let plan else { return nil }
        return TransferLeases.ProbedFile(claim: claim, plan: plan, digest: digest, unchanged: isUnchanged)
    }

    /// The probe's request (as long as the first S3 part), counted in `shared`'s progress and metrics.
    func job(shared: WorkerShared) -> MultiClient.Job {
        let info = claim.info
        limits = shared.planLimits(for: info)
        let last = ObjectPlanning.firstSegment(info, store: store) - 1
        var request = shared.request(for: info, first: 0, last: last, capBody: true)
        ConditionalProbe.ask(&request, ifChangedSince: previous)
        return MultiClient.Job(
            request: request, onHead: { [self] head in try accept(head, requestedLast: last, config: shared.config) },
            onData: { [self] bytes in
                try write(bytes)
                shared.progress.add(Int64(bytes.count), transfer: info.id)
                shared.metrics.bytesFetched.add(bytes.count)
            })
    }

    /// Decides from the head what this probe does with its response.
    private func accept(_ head: ResponseHead, requestedLast: Int64, config: WorkerConfig) throws {
        let info = claim.info
        let outcome = try ProbeOutcome.classify(head, requestedLast: requestedLast, url: info.url)
        if outcome == .notModified || ConditionalProbe.notNewer(head, than: previous, info: info) {
            let kept = try ConditionalProbe.unchanged(head, previous: info.dest == nil ? nil : previous)
            plan = TransferLeases.Plan(
                dest: info.dest ?? "", host: OriginURL.hostKey(info.url), size: kept.size, etag: kept.etag,
                lastModified: kept.lastModified, contentType: nil, acceptsRanges: false, ranges: [], unknownLength: false)
            verdict = .unchanged
            return
        }
        let plan = try ObjectPlanning.fit(
            Planner.plan(outcome, head: head, info: info, storage: config.storage, limits: limits), info: info, store: store)
        let staged = info.options.extract == true || info.options.uploadTo != nil
        guard plan.ranges.count <= 1, !plan.unknownLength, (plan.size ?? 0) < S3PartRules.minimumPart, !staged else {
            verdict = .handOff(plan)
            throw HandOff()
        }
        if let size = plan.size, size > 0 {
            upload = try PartStream.putObject(
                client: store.client, bucket: store.location.bucket, key: try store.key(for: plan.dest), length: size,
                sha256: ObjectPart.expectedSHA256(info))
        }
        digester = info.digestAlgorithm.map(Digester.init)
        self.plan = plan
        verdict = .whole
    }

    /// Streams bytes into the `PutObject`, keeping the object's last byte back.
    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        let size = plan?.size ?? 0
        guard received + Int64(bytes.count) <= size, let upload else {
            throw HaulError(.sizeMismatch, "the origin sent more than the \(size) bytes it announced", transient: true)
        }
        let last = received + Int64(bytes.count) == size
        try upload.write(last ? UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 1)]) : bytes) { [leases, claim] in
            leases.renewIfDue()
            return leases.isHeld(claim.info.id)
        }
        if last { heldByte = bytes[bytes.count - 1] }
        digester?.update(bytes)
        received += Int64(bytes.count)
    }

    /// Takes the request's outcome: a whole file whose size and digest are right and whose lease
    /// is held gets its last byte sent (an empty one its `PutObject` started); the answer is read
    /// in `settle`, so that the batch goes on meanwhile.
    func end(_ outcome: Result<HTTPClient.Summary, Error>) {
        if case .handOff = verdict { return }
        do {
            _ = try outcome.get()
            guard case .whole = verdict else { return }
            let size = plan?.size ?? 0
            guard received == size else {
                throw HaulError(.incomplete, "the origin sent \(received) of the \(size) bytes it announced", transient: true)
            }
            digest = try digester.map { try claim.info.verified($0.finish()) }
            guard leases.isHeld(claim.info.id) else {
                discard()
                verdict = .lost
                return
            }
            if let byte = heldByte {
                try withUnsafeBytes(of: byte) { bytes in try upload?.write(bytes) { true } }
            } else if let plan {
                upload = try PartStream.putObject(client: store.client, bucket: store.location.bucket, key: try store.key(for: plan.dest), length: 0)
            }
        } catch {
            discard()
            verdict = leases.isHeld(claim.info.id) ? .failed(error) : .lost
        }
    }

    /// Waits for the `PutObject`'s answer. - Returns: the final verdict.
    func settle() -> Verdict {
        guard case .whole = verdict, let upload else { return verdict }
        do {
            _ = try upload.finish {}
            self.upload = nil
            if let earlier = claim.info.objectUploadID, let dest = plan?.dest {
                // A restarted transfer that had been cut into parts: its multipart upload goes.
                try? store.client.abortUpload(bucket: store.location.bucket, key: try store.key(for: dest), uploadID: earlier)
            }
        } catch {
            verdict = .failed(error)
        }
        return verdict
    }

    /// Stops the `PutObject` without completing it: nothing is stored.
    private func discard() {
        upload?.abort()
        upload = nil
        heldByte = nil
    }
}
