import Foundation
import HaulCore
import HaulHTTP
import HaulQueue

extension WorkerShared {
    /// A GET of `info`'s URL with the transfer's headers, TLS settings, stall timeout, redirect
    /// and address policies: every request a worker makes to an origin is built here.
    /// - Parameter bodyCap: the plan limits to cap the body at (`PlanLimits.bodyLimit`): for
    ///   probes, whose answer may be a whole file of any length, and for bodies of unknown length.
    ///   `nil` for segments of a known size: their length was checked when planned, and the
    ///   storage's free space has shrunk since by the file's own reservation.
    func request(for info: TransferInfo, first: Int64?, last: Int64?, ifRange: String? = nil, bodyCap: PlanLimits?) -> FetchRequest {
        var request = FetchRequest(
            url: info.url, headerLines: info.headers.map { "\($0.name): \($0.value)" }, first: first, last: last, ifRange: ifRange,
            tls: tls(for: info), stallTimeout: config.stallTimeout)
        if let limit = bodyCap?.bodyLimit { request.bodyLimit = BodyLimit(bytes: limit.bytes, isFreeSpace: limit.transient) }
        request.addressPolicy = config.addressPolicy
        request.pacer = pacer
        request.lowestSpeed =
            config.limitRate == nil
            ? LowestSpeed.forTransfer(worker: config.lowestSpeed, bytesPerSecond: info.options.lowestSpeed, seconds: info.options.lowestSpeedTime) : nil
        request.allowDowngrade = info.expectedDigest != nil || info.options.allowDowngrade == true
        return request
    }

    /// The limits a plan of `info` must keep: the smaller of the transfer's and the worker's
    /// `--max-file-size`, and the space free on the storage. On S3 storage the file goes to the
    /// bucket, whose space is not known (nor usually bounded), and the local scratch folder's
    /// space bounds only a transfer to extract: its archive may be a zip, spooled there whole.
    func planLimits(for info: TransferInfo) -> PlanLimits {
        let limits = [info.options.maxFileSize, config.maxFileSize].compactMap { $0 }
        let spooled = config.backend.features.contains(.localSpace) || info.options.extract == true
        let space = spooled ? Self.space(config.storage.path) : nil
        return PlanLimits(maxFileSize: limits.min(), freeSpace: space?.free, capacity: space?.capacity)
    }

    /// Bytes an unprivileged writer may still use on the file system holding `path`, and its
    /// size in all, if known: a file system that reports no size at all (`ramfs`, some FUSE
    /// mounts) sets no limit.
    static func space(_ path: String) -> (free: Int64, capacity: Int64)? {
        var info = statvfs()
        guard statvfs(path, &info) == 0, info.f_blocks > 0 else { return nil }
        let block = Int64(clamping: info.f_frsize)
        let (free, overflowFree) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: block)
        let (capacity, overflowAll) = Int64(clamping: info.f_blocks).multipliedReportingOverflow(by: block)
        return overflowFree || overflowAll ? nil : (free, capacity)
    }
}

extension WorkerShared {
    /// Fails `claim` when it was claimed more often than its attempts allow: every earlier claim
    /// ended without an outcome (a failure is recorded and counted; a graceful stop gives its
    /// attempt back), so workers crashed or were killed on it, and the row must not take the
    /// next worker down too.
    /// - Returns: whether the transfer was failed (do not work on it).
    func failIfAbandoned(_ claim: TransferLeases.Claim, phase: String, database: ResilientConnection) -> Bool {
        let maxAttempts = claim.info.options.maxAttempts ?? config.maxAttempts
        guard claim.attempts > maxAttempts else { return false }
        let error = HaulError(
            .abandoned,
            "\(phase) of transfer \(claim.info.id) was started \(claim.attempts - 1) times without finishing: a worker crashed or was killed each time",
            hint: "look at the workers' logs for the cause; \(claim.info.retryCommand) tries again")
        database.bestEffort("fail abandoned transfer \(claim.info.id)") { conn in
            try TransferLeases(conn, workerID: config.workerID).postpone(claim, error: error, retryAfter: 0, attempts: claim.attempts, maxAttempts: maxAttempts)
        }
        Log.error("transfer failed", [("transfer", String(claim.info.id)), ("error", error.description)])
        return true
    }
}
