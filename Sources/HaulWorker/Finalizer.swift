import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// The finalizer role: verify a transfer whose segments are all done, assemble it, check its
/// digest, publish it atomically under its destination name, and mark it done.
struct Finalizer: LaneRole {
    let lane: Lane

    /// Finalizes one transfer. - Returns: whether there was one.
    func finalizeOne() throws -> Bool {
        let config = shared.config
        let claimed = try database.run { conn in
            try TransferLeases(conn, workerID: config.workerID, scope: config.scope, storage: config.storageIdentity).claimFinalizing(lease: config.lease)
        }
        guard let claim = claimed else { return false }
        lane.tookWork()
        if shared.failIfAbandoned(claim, phase: "finalizing", database: database) { return true }
        let fields = [("transfer", String(claim.info.id))]
        let keeper = LeaseKeeper(lane: lane, claim: claim)
        defer { keeper.stop() }
        do {
            let digest = try finalize(claim, keeper: keeper)
            let finished = try database.run(patient: true) { conn in try TransferLeases(conn, workerID: config.workerID).finish(claim, computedDigest: digest) }
            if finished {
                Log.info("transfer done", fields + [("dest", claim.info.dest ?? "")] + (digest.map { [("digest", $0)] } ?? []))
            } else {
                Log.warning("finalizing lease lost after publishing; another finalizer will confirm", fields)
            }
        } catch let error as HaulError where error.code == .leaseLost {
            Log.warning("finalizing lease lost; stopped before publishing", fields)
        } catch let error as HaulError where error.code == .partsMissing {
            Log.warning("part files are missing from storage; their segments are fetched again", fields + [("error", error.description)])
        } catch let error as HaulError where StartingOver.applies(to: error) {
            StartingOver.report(error, by: .finalizer(claim), database: database, workerID: config.workerID, fields: fields)
        } catch let mismatch as KeptMismatch {
            failChecksum(claim, error: mismatch.error, computed: mismatch.actual, fields: fields)
        } catch let error as HaulError where error.code == .checksumMismatch {
            failChecksum(claim, error: error, computed: nil, fields: fields)
        } catch {
            // A transient failure is retried with backoff, but not forever: the transfer's claims
            // (planning and finalizing) count against its attempts.
            let haulError = (error as? HaulError) ?? HaulError(.`internal`, "\(error)", transient: true)
            let delay = config.backoff.delay(afterAttempt: claim.attempts, jitter: Double.random(in: 0..<1))
            database.bestEffort("record the finalizing failure") { conn in
                try TransferLeases(conn, workerID: config.workerID).postpone(
                    claim, error: haulError, retryAfter: delay, attempts: claim.attempts, maxAttempts: claim.info.options.maxAttempts ?? config.maxAttempts)
            }
            Log.error("finalizing failed", fields + [("error", haulError.description)])
        }
        return true
    }

    /// Publishes the verified file (unless an earlier attempt did), then extracts and uploads
    /// as asked; returns the digest to record.
    private func finalize(_ claim: TransferLeases.Claim, keeper: LeaseKeeper) throws -> String? {
        let config = shared.config
        guard let dest = claim.info.dest else { throw HaulError(.unplanned, "transfer \(claim.info.id) has no destination") }
        let progress = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).progress(of: claim) }
        var digest: String?
        if progress.published {
            digest = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).publishedDigest(of: claim) }
        } else {
            digest = try publish(claim, dest: dest, keeper: keeper, markedPublishing: progress.publishing)
            let recorded = try database.run(patient: true) { conn in try TransferLeases(conn, workerID: config.workerID).markPublished(claim, digest: digest) }
            guard recorded else { throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now") }
        }
        try FinalizerStages(shared: shared, database: database, claim: claim, keeper: keeper).run(dest: dest, progress: progress)
        return digest
    }

    /// Has the storage put the file in place from the segments recorded, verified (size and
    /// digest). `keeper` renews the lease meanwhile, so a finalizer that lost its lease never
    /// publishes. Segments whose stored pieces are gone are queued again.
    /// - Parameter markedPublishing: an earlier finalizer recorded that it set out to publish
    ///   this generation (`markPublishing`), so a file at the destination may be its.
    private func publish(_ claim: TransferLeases.Claim, dest: String, keeper: LeaseKeeper, markedPublishing: Bool) throws -> String? {
        let config = shared.config
        let backend = config.backend
        let segments = try database.run { conn in
            let leases = TransferLeases(conn, workerID: config.workerID)
            let etags = backend.features.contains(.atomicSegments) ? try leases.partETags(of: claim) : []
            let byIndex = Dictionary(etags.map { ($0.index, $0.etag) }, uniquingKeysWith: { first, _ in first })
            return try leases.segments(of: claim).map { segment in
                StoredSegment(
                    index: segment.index, length: segment.length, bytesDone: segment.bytesDone,
                    parts: segment.parts.map { StoredPart(path: $0.path, offset: $0.offset, length: $0.length) }, etag: byIndex[segment.index] ?? nil)
            }
        }
        let info = claim.info
        let file = FinishedFile(
            dest: dest, partFiles: info.layout == .parts, generation: claim.generation, lease: claim.leaseToken, url: info.url, announcedSize: info.size,
            segments: segments, uploadID: info.objectUploadID, contentType: info.contentType, digestAlgorithm: info.digestAlgorithm,
            expectsDigest: info.expectedDigest != nil, markedPublishing: markedPublishing, holding: shared.heldPartials(for: info), transferID: info.id,
            retryCommand: info.retryCommand)
        do {
            return try backend.publish(file, fence: FinalizerFence(claim: claim, keeper: keeper, config: config, database: database))
        } catch let lost as PartsLost {
            try refetch(lost.indexes, of: claim)
        }
    }

    /// Queues segments whose part files are gone again (the transfer goes back to downloading)
    /// and stops this finalizer with `parts-missing`.
    private func refetch(_ indexes: [Int], of claim: TransferLeases.Claim) throws -> Never {
        let reason = "part files of segments \(indexes.map(String.init).joined(separator: ", ")) were missing from storage; fetching them again"
        let requeued = try database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: shared.config.workerID).refetch(claim, segments: indexes, reason: reason)
        }
        guard requeued else { throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now") }
        throw HaulError(.partsMissing, reason, transient: true)
    }

    /// Fails `claim` for its digest; `computed`: the digest of the bytes kept, if they were.
    private func failChecksum(_ claim: TransferLeases.Claim, error: HaulError, computed: String?, fields: [(String, String)]) {
        database.bestEffort("record the checksum failure") { conn in
            try TransferLeases(conn, workerID: shared.config.workerID).failChecksum(claim, message: error.description, computed: computed)
        }
        Log.error("checksum mismatch", fields + [("error", error.description)])
    }
}
