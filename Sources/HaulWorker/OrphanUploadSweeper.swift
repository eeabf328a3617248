import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// On a storage that leaves uploads open (`StorageFeatures.openUploads`, S3): every
/// `HAUL_S3_ORPHAN_CHECK` aborts the uploads under the prefix that are Haul's but that no
/// transfer will complete, once older than `HAUL_S3_ORPHAN_GRACE` (`abortOrphans`: other
/// tools' uploads are never touched), so no orphaned parts accrue charges. Its first sweep is
/// at the start.
final class OrphanUploadSweeper: MaintenanceService {
    /// What the sweeper reads from the environment.
    struct Config: Equatable {
        /// Seconds between sweeps (`HAUL_S3_ORPHAN_CHECK`).
        var every: Double = 600
        /// How old an orphaned upload of Haul's must be before it is aborted (`HAUL_S3_ORPHAN_GRACE`).
        var grace: Double = 3600
        /// Values that were not durations and gave way to the defaults.
        var problems: [String] = []

        /// The settings of `environment`; a value that is no duration keeps the default.
        init(environment: [String: String]) {
            for (name, keyPath) in [("HAUL_S3_ORPHAN_CHECK", \Config.every), ("HAUL_S3_ORPHAN_GRACE", \Config.grace)] {
                guard let text = environment[name] else { continue }
                if let seconds = Duration.parseSeconds(text) {
                    self[keyPath: keyPath] = seconds
                } else {
                    problems.append("\(name)=\(text) is not a duration (such as 10m or 1h); using \(Int(self[keyPath: keyPath])) s")
                }
            }
        }
    }

    let name = "orphan upload sweeper"
    let runsAtStart = true
    let config: Config
    private let storage: any Storage
    private let database: ResilientConnection

    var interval: Double { config.every }

    init(config: Config, storage: any Storage, database: ResilientConnection) {
        self.config = config
        self.storage = storage
        self.database = database
    }

    func runOnce() throws {
        try abortOrphans(grace: config.grace)
    }

    /// Aborts the uploads under the prefix that are provably Haul's and that no one will
    /// complete (see `UploadKnowledge.verdict`): those recorded by a stopped transfer of any
    /// worker, and those begun more than `grace` seconds ago at a key where the database says a
    /// planner or extraction was about to open one that it never recorded. Uploads of other
    /// hosts, fleets and tools under the same prefix are left alone. - Returns: how many.
    @discardableResult
    func abortOrphans(grace: Double) throws -> Int {
        guard let listing = try storage.openUploads() else { return 0 }
        let bucket = listing.container
        let open = listing.uploads
        defer {
            try? database.run(patient: false) { conn in
                try ObjectUploads.pruneIntents(conn, bucket: bucket, olderThan: grace + 2 * UploadKnowledge.window)
            }
        }
        guard !open.isEmpty else { return 0 }
        let known = try database.run(patient: false) { conn in try ObjectUploads.known(conn, bucket: bucket, keys: Array(Set(open.map(\.key)))) }
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        var aborted = 0
        for upload in open {
            let initiated = (parser.date(from: upload.initiated) ?? plain.date(from: upload.initiated))?.timeIntervalSince1970
            let verdict = known.verdict(key: upload.key, uploadID: upload.uploadID, initiated: initiated, now: Date().timeIntervalSince1970, grace: grace)
            guard verdict != .keep else { continue }
            try storage.abortUpload(upload)
            if case .abortStopped(let transfer) = verdict {
                try database.run(patient: false) { conn in try ObjectUploads.forget(conn, transferID: transfer, uploadID: upload.uploadID) }
            }
            aborted += 1
        }
        if aborted > 0 { Log.info("aborted orphaned S3 uploads", [("count", String(aborted)), ("prefix", storage.identity)]) }
        return aborted
    }
}
