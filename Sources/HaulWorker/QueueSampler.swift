import HaulQueue

/// Updates the queue gauges from `QueueFigures`, the definition `workers` and `status` share,
/// at every round, when there is a `/metrics` to show them.
final class QueueSampler: MaintenanceService {
    let name = "queue sampler"
    let interval = 0.0
    let runsAtStart = true
    private let shared: WorkerShared
    private let database: ResilientConnection

    init(shared: WorkerShared, database: ResilientConnection) {
        self.shared = shared
        self.database = database
    }

    func runOnce() throws {
        guard shared.metrics.isServed else { return }
        let figures = try database.run { conn in try QueueFigures.sample(conn) }
        shared.metrics.queueDepth.set(figures.due)
        shared.metrics.segments(figures.segments)
    }
}
