import Foundation
import HaulCore
import HaulQueue
import HaulS3Storage
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
        if let store = config.objectStore {
            let limits = FinalizerStages.extractionLimits(claim.info.options, config: config)
            let database = database
            let finalizer = ObjectFinalizer(
                workerID: config.workerID, store: store, database: database, extractionLimits: limits
            ) { dest, claim in try OthersFiles.refuse(dest, of: claim, config: config, database: database) }
            let digest = try finalizer.finalize(claim, keeper: keeper)
            if claim.info.options.uploadTo != nil, let dest = claim.info.dest {
                // The uploaders send a file: the object is read back into the private scratch folder.
                let progress = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).progress(of: claim) }
                let copy = try store.readBack(dest) { [shared] in shared.isStopping() || keeper.isLost }
                defer { copy.remove() }
                try FinalizerStages(shared: shared, database: database, claim: claim, keeper: keeper).upload(copy.path, progress: progress) {
                    try store.discard(dest)
                }
            }
            return digest
        }
        guard let dest = claim.info.dest else { throw HaulError(.unplanned, "transfer \(claim.info.id) has no destination") }
        let files = try TransferFiles(root: config.storage, relative: dest)
        let progress = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).progress(of: claim) }
        var digest: String?
        if progress.published {
            digest = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).publishedDigest(of: claim) }
        } else {
            digest = try publish(claim, files: files, keeper: keeper, markedPublishing: progress.publishing)
            let recorded = try database.run(patient: true) { conn in try TransferLeases(conn, workerID: config.workerID).markPublished(claim, digest: digest) }
            guard recorded else { throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now") }
        }
        try FinalizerStages(shared: shared, database: database, claim: claim, keeper: keeper).run(file: files.destination, progress: progress)
        return digest
    }

    /// Builds the file from its segments, verifies size and digest, and renames it into place.
    /// `keeper` renews the lease meanwhile; it is checked while copying and hashing and renewed
    /// once more just before the rename, so a finalizer that lost its lease never publishes.
    /// - Parameter markedPublishing: an earlier finalizer recorded that it set out to rename
    ///   this generation's file (`markPublishing`), so a file at the destination may be its.
    private func publish(_ claim: TransferLeases.Claim, files: TransferFiles, keeper keepAlive: LeaseKeeper, markedPublishing: Bool) throws -> String? {
        let config = shared.config
        let dest = claim.info.dest ?? ""
        let segments = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).segments(of: claim) }
        let size = claim.info.size ?? segments.reduce(0) { $0 + $1.bytesDone }
        if let short = segments.first(where: { $0.bytesDone != $0.length }) {
            throw HaulError(.incomplete, "segment \(short.index) holds \(short.bytesDone) of \(short.length) bytes", hint: "run \(claim.info.retryCommand)")
        }
        let source: String
        if segments.isEmpty {
            source = files.partial(generation: claim.generation)
            try files.preparePartial(size: 0, generation: claim.generation, url: claim.info.url, holding: shared.heldPartials(for: claim.info))
        } else if claim.info.layout == .parts {
            // Part paths come back from the database: they must pass the same rules as a --dest.
            let pieces = try segments.flatMap { segment in
                try segment.parts.map { Assembler.Piece(path: try config.storage.recorded($0.path), offset: $0.offset, length: $0.length) }
            }
            let lost = segments.filter { segment in segment.parts.contains { Assembler.size(of: config.storage.path + "/" + $0.path) == nil } }
            if !lost.isEmpty {
                if markedPublishing, let earlier = try confirmEarlierPublish(claim, files: files, size: size, keepAlive: keepAlive) { return earlier.digest }
                try refetch(lost.map(\.index), of: claim)
            }
            source = files.assembly(generation: claim.generation, lease: claim.leaseToken)
            try Assembler.concatenate(pieces, into: source, root: config.storage, keepAlive: keepAlive.check)
        } else {
            source = files.partial(generation: claim.generation)
            try files.confirmPartial(generation: claim.generation, url: claim.info.url)
        }
        guard let actual = Assembler.size(of: source) else {
            if markedPublishing, let earlier = try confirmEarlierPublish(claim, files: files, size: size, keepAlive: keepAlive) { return earlier.digest }
            throw TransferFiles.partialGone(source)
        }
        if actual > size { try Assembler.truncate(source, to: size, root: config.storage) }
        guard actual >= size else {
            throw HaulError(
                .sizeMismatch, "\(dest) has \(actual) bytes on storage but the origin announced \(size)", hint: "run \(claim.info.retryCommand)")
        }
        let digest = try verifyDigest(claim, path: source, keepAlive: keepAlive.check)
        try OthersFiles.refuse(dest, of: claim, config: config, database: database)
        try keepAlive.renew()
        let marked = try database.run(patient: true) { conn in try TransferLeases(conn, workerID: config.workerID).markPublishing(claim) }
        guard marked else { throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now") }
        try Assembler.publish(source, from: claim.info.url, as: files, generation: claim.generation)
        shared.heldPartials(for: claim.info)?.release(source)
        return digest
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

    /// An earlier finalizer of this transfer, which recorded that it set out to publish, may have
    /// renamed the file into place and lost its lease before recording it. If the destination
    /// holds a file of the right size (and digest), that publish stands.
    /// - Returns: `nil` if it does not check out.
    private func confirmEarlierPublish(_ claim: TransferLeases.Claim, files: TransferFiles, size: Int64, keepAlive: LeaseKeeper) throws -> EarlierPublish? {
        guard Assembler.size(of: files.destination) == size else { return nil }
        let digest = try verifyDigest(claim, path: files.destination, keepAlive: keepAlive.check)
        files.removeTemporaries(generation: claim.generation)
        return EarlierPublish(digest: digest)
    }

    /// A publish an earlier finalizer made, confirmed, with the digest to record.
    private struct EarlierPublish {
        let digest: String?
    }

    /// The digest of the file at `path`, checked against the expected one.
    /// - Throws: `KeptMismatch` when they differ.
    private func verifyDigest(_ claim: TransferLeases.Claim, path: String, keepAlive: () throws -> Void) throws -> String? {
        guard let algorithm = claim.info.digestAlgorithm else { return nil }
        let actual = try Assembler.digest(of: path, algorithm: algorithm, root: shared.config.storage, keepAlive: keepAlive)
        do {
            return try claim.info.verified(actual)
        } catch let error as HaulError where error.code == .checksumMismatch {
            throw KeptMismatch(error: error, actual: actual.description)
        }
    }

    /// A finished file whose digest is not the one expected, its bytes kept on storage.
    private struct KeptMismatch: Error {
        let error: HaulError
        /// The digest the bytes have (`algorithm:hex`).
        let actual: String
    }

    /// Fails `claim` for its digest; `computed`: the digest of the bytes kept, if they were.
    private func failChecksum(_ claim: TransferLeases.Claim, error: HaulError, computed: String?, fields: [(String, String)]) {
        database.bestEffort("record the checksum failure") { conn in
            try TransferLeases(conn, workerID: shared.config.workerID).failChecksum(claim, message: error.description, computed: computed)
        }
        Log.error("checksum mismatch", fields + [("error", error.description)])
    }
}
