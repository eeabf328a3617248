import Foundation

/// One housekeeping job of a worker, in the manner of River's maintenance services: its own
/// config with defaults read once, how often it runs, and `runOnce()`, one round of the job,
/// which the housekeeper calls when it is due and tests call directly.
protocol MaintenanceService: AnyObject {
    /// The job's name, for logs.
    var name: String { get }
    /// Seconds between two rounds; 0 runs it at every round of the housekeeper.
    var interval: Double { get }
    /// Whether its first round is due at once, rather than one interval after the start.
    var runsAtStart: Bool { get }
    /// Does one round of the job.
    func runOnce() throws
}

/// Runs maintenance services when they are due, in the order given. Pure bookkeeping: the
/// caller says what time it is, so tests drive it with any clock.
final class MaintenanceScheduler {
    /// The services, in the order they run within a round.
    let services: [any MaintenanceService]
    private var lastRuns: [Date]

    /// Schedules `services`, started at `start`.
    init(_ services: [any MaintenanceService], start: Date = Date()) {
        self.services = services
        lastRuns = services.map { $0.runsAtStart ? .distantPast : start }
    }

    /// The services due at `now`.
    func due(at now: Date) -> [any MaintenanceService] {
        services.indices.filter { now.timeIntervalSince(lastRuns[$0]) >= services[$0].interval }.map { services[$0] }
    }

    /// Runs each service due at `now` once, in order, each marked run before it starts (a
    /// failing one waits its interval too); the first failure ends the round.
    func runDue(at now: Date = Date()) throws {
        for index in services.indices where now.timeIntervalSince(lastRuns[index]) >= services[index].interval {
            lastRuns[index] = now
            try services[index].runOnce()
        }
    }
}
