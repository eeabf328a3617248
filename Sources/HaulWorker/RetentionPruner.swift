import HaulCore
import HaulQueue

/// Now and then (`Retention.pruneInterval`: every 10 minutes for the default retention, more
/// often for a short one) one worker of the fleet (an advisory lock picks it) deletes finished
/// transfers older than `HAUL_RETENTION`. Its first round is one interval after the start.
final class RetentionPruner: MaintenanceService {
    /// What the pruner reads from the environment.
    struct Config: Equatable {
        /// Seconds finished transfers are kept (`HAUL_RETENTION`, default 7d); nil when pruning
        /// is off (`off`, or a value that is no duration).
        var retention: Double? = 7 * 86_400
        /// A value that was neither a duration nor `off`, which turns pruning off.
        var problems: [String] = []

        /// The setting of `environment`.
        init(environment: [String: String]) {
            guard let text = environment["HAUL_RETENTION"] else { return }
            retention = text == "off" ? nil : Duration.parseSeconds(text)
            if text != "off" && retention == nil {
                problems.append("HAUL_RETENTION=\(text) is neither a duration (such as 7d) nor off; finished transfers are not pruned")
            }
        }
    }

    let name = "retention pruner"
    let runsAtStart = false
    let interval: Double
    private let retention: Double
    private let database: ResilientConnection

    /// A pruner for `config`, or nil when pruning is off.
    init?(config: Config, database: ResilientConnection) {
        guard let retention = config.retention else { return nil }
        self.retention = retention
        self.database = database
        interval = Retention.pruneInterval(retention: retention)
    }

    func runOnce() throws {
        _ = try database.run { conn in try Retention.pruneIfFree(conn, olderThan: retention) }
    }
}
