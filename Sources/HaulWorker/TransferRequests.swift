import Foundation
import HaulCore
import HaulHTTP
import HaulQueue

extension WorkerShared {
    /// A GET of `info`'s URL with the transfer's headers, TLS settings, stall timeout and body
    /// limit: every request a worker makes to an origin is built here.
    func request(for info: TransferInfo, first: Int64?, last: Int64?, ifRange: String? = nil) -> FetchRequest {
        var request = FetchRequest(
            url: info.url, headerLines: info.headers.map { "\($0.name): \($0.value)" }, first: first, last: last, ifRange: ifRange,
            tls: tls(for: info), stallTimeout: config.stallTimeout)
        request.maxBodyBytes = planLimits(for: info).bodyLimit
        request.addressPolicy = config.addressPolicy
        request.allowDowngrade = info.expectedDigest != nil || info.options.allowDowngrade == true
        return request
    }

    /// The limits a plan of `info` must keep: the smaller of the transfer's and the worker's
    /// `--max-file-size`, and the space free on the storage.
    func planLimits(for info: TransferInfo) -> PlanLimits {
        let limits = [info.options.maxFileSize, config.maxFileSize].compactMap { $0 }
        return PlanLimits(maxFileSize: limits.min(), freeSpace: Self.freeSpace(config.storage.path))
    }

    /// Bytes an unprivileged writer may still use on the file system holding `path`, if known.
    static func freeSpace(_ path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
        return overflow ? nil : bytes
    }
}

extension WorkerShared {
    /// Fails `claim` when it was claimed more often than its attempts allow: every earlier claim
    /// ended without an outcome (a failure is recorded and counted; a graceful stop gives its
    /// attempt back), so workers crashed or were killed on it, and the row must not take the
    /// next worker down too.
    /// - Returns: whether the transfer was failed (do not work on it).
    func failIfAbandoned(_ claim: TransferLeases.Claim, phase: String, database: Database) -> Bool {
        let maxAttempts = claim.info.options.maxAttempts ?? config.maxAttempts
        guard claim.attempts > maxAttempts else { return false }
        let error = HaulError(
            "abandoned", "\(phase) of transfer \(claim.info.id) was started \(claim.attempts - 1) times without finishing: a worker crashed or was killed each time",
            hint: "look at the workers' logs for the cause; 'haul retry \(claim.info.id)' tries again")
        _ = try? database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: config.workerID).postpone(claim, error: error, retryAfter: 0, attempts: claim.attempts, maxAttempts: maxAttempts)
        }
        Log.error("transfer failed", [("transfer", String(claim.info.id)), ("error", error.description)])
        return true
    }
}
