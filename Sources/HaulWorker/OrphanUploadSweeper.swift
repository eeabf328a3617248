import HaulCore
import HaulS3Storage

/// On S3 storage: every `HAUL_S3_ORPHAN_CHECK` aborts the uploads under the prefix that are
/// Haul's but that no transfer will complete, once older than `HAUL_S3_ORPHAN_GRACE`
/// (`ObjectStore.abortOrphans`: other tools' uploads are never touched), so no orphaned parts
/// accrue charges. Its first sweep is at the start.
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
    private let store: ObjectStore
    private let database: ResilientConnection

    var interval: Double { config.every }

    init(config: Config, store: ObjectStore, database: ResilientConnection) {
        self.config = config
        self.store = store
        self.database = database
    }

    func runOnce() throws {
        try store.abortOrphans(database, grace: config.grace)
    }
}
