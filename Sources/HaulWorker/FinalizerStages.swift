import Foundation
import HaulArchive
import HaulCore
import HaulPostgres
import HaulQueue
import HaulStorage
import HaulUpload

/// What the finalizer does with a verified, published file when the transfer asks:
/// extract it (`--extract`) and upload it (`--upload-to`). Each stage is recorded when done,
/// so `haul retry` after a failed upload re-runs just the upload.
struct FinalizerStages {
    let shared: WorkerShared
    let database: ResilientConnection
    let claim: TransferLeases.Claim
    /// Renews the finalizing lease meanwhile; an upload stops once it is lost.
    let keeper: LeaseKeeper

    /// Runs the stages that are asked for and not yet done, on the file published at `dest`.
    func run(dest: String, progress: TransferLeases.Progress) throws {
        let options = claim.info.options
        if options.extract == true, !progress.extracted {
            try extract(dest)
            try keeper.check()
            try database.run(patient: true) { conn in try leases(conn).markExtracted(claim) }
        }
        guard let target = options.uploadTo else { return }
        // The uploaders send a file: from a bucket, the object is read back into the private scratch folder.
        let backend = shared.config.backend
        let copy = try backend.readBack(dest) { [shared, keeper] in shared.isStopping() || keeper.isLost }
        defer { copy.remove() }
        try upload(copy.path, to: target, resumeURL: progress.uploadURL)
        if options.deleteAfterUpload == true { try backend.discard(dest) }
    }

    /// `--extract` of the file published at `dest` into its folder.
    private func extract(_ dest: String) throws {
        let relative = try SafePath.validate(claim.info.options.extractTo ?? Extractor.defaultFolder(for: dest), what: "--extract-to")
        let request = ExtractionRequest(archive: dest, folder: relative, size: claim.info.size ?? 0, limits: limits, transferID: claim.info.id)
        let journal = ExtractionRecorder(database: database, workerID: shared.config.workerID, claim: claim)
        _ = try shared.config.backend.extract(request, journal: journal) { [keeper] in keeper.isLost }
    }

    /// The transfer's extraction limits, each capped by the worker's own.
    private var limits: ExtractionLimits { Self.extractionLimits(claim.info.options, config: shared.config) }

    /// `options`' extraction limits, each capped by the worker's own (`config`).
    static func extractionLimits(_ options: TransferOptions, config: WorkerConfig) -> ExtractionLimits {
        var limits = ExtractionLimits()
        limits.maxSize = [options.extractMaxSize, config.extractMaxSize].compactMap { $0 }.min()
        limits.maxRatio = [options.extractMaxRatio, config.extractMaxRatio].compactMap { $0 }.min()
        return limits
    }

    private func upload(_ file: String, to url: String, resumeURL: String?) throws {
        if url.hasPrefix("s3://") { return try uploadObject(file, to: url) }
        let options = claim.info.options
        let headers: [String] = []
        let tls = shared.uploadTLS(for: claim.info)
        let shouldCancel = { shared.isStopping() || keeper.isLost }
        let response: UploadResponse
        do {
            if options.uploadProtocol == "tus" {
                let request = TusRequest(
                    url: url, file: file, fields: try (options.uploadFields ?? []).map(MultipartRequest.parseField), headers: headers,
                    caBundle: tls.caBundle, insecure: tls.insecure)
                response = try TusUploader.upload(
                    request, resumeURL: resumeURL,
                    // Without the record a later finalizer starts a new upload instead of resuming this one.
                    onUploadURL: { created in database.bestEffort("record the tus upload URL") { conn in try leases(conn).recordUpload(claim, url: created) } },
                    shouldCancel: shouldCancel)
            } else {
                var request = MultipartRequest(url: url, files: [file], headers: headers, caBundle: tls.caBundle, insecure: tls.insecure)
                request.fields = try (options.uploadFields ?? []).map(MultipartRequest.parseField)
                response = try MultipartUploader.send(request, shouldCancel: shouldCancel)
            }
        } catch let error as HaulError {
            throw HaulError(
                error.code, "upload to \(Redaction.url(url)) failed: \(error.message)", hint: "\(claim.info.retryCommand) retries just the upload",
                transient: false)
        }
        let result = "\(response.statusLine)\n\(String(decoding: response.body, as: UTF8.self))"
        try database.run(patient: true) { conn in try leases(conn).recordUpload(claim, result: result) }
        Log.info("uploaded", [("transfer", String(claim.info.id)), ("status", String(response.status))])
    }

    private func uploadObject(_ file: String, to target: String) throws {
        let result: String
        do {
            let options = claim.info.options
            let replacing = options.replaceExisting == true || (options.localTarget != nil && options.keepExisting != true)
            guard let send = shared.config.objectUploader else {
                throw HaulError(.`internal`, "this worker was built without an uploader for s3:// targets, so it cannot upload to \(target)")
            }
            result = try send(file, claim.info.url, target, replacing, claim.info.contentType) { shared.isStopping() || keeper.isLost }
        } catch let error as HaulError {
            let hint = error.code == .destinationExists ? error.hint : "\(claim.info.retryCommand) retries just the upload"
            throw HaulError(error.code, "upload to \(target) failed: \(error.message)", hint: hint)
        }
        try database.run(patient: true) { conn in try leases(conn).recordUpload(claim, result: result) }
        Log.info("uploaded", [("transfer", String(claim.info.id)), ("to", target)])
    }

    private func leases(_ conn: PostgresConnection) -> TransferLeases {
        TransferLeases(conn, workerID: shared.config.workerID)
    }
}
