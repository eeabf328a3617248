import HaulCore
import HaulQueue

/// The rescuer's three rescues, at every round: segments and plans whose lease ran out go
/// back to the queue, and fully downloaded transfers whose last completion was lost in an
/// outage move on to finalizing.
final class LeaseRescuer: MaintenanceService {
    let name = "lease rescuer"
    let interval = 0.0
    let runsAtStart = true
    private let shared: WorkerShared
    private let database: ResilientConnection

    init(shared: WorkerShared, database: ResilientConnection) {
        self.shared = shared
        self.database = database
    }

    func runOnce() throws {
        let (segments, plans, stuck) = try database.run { conn -> (Int, Int, Int) in
            let segments = try SegmentLeases.rescueExpired(on: conn)
            let plans = try TransferLeases.rescueExpired(on: conn)
            let stuck = try TransferLeases.finishStuckDownloads(on: conn)
            return (segments, plans, stuck)
        }
        if segments + plans + stuck > 0 {
            Log.info("rescued expired leases", [("segments", String(segments)), ("plans", String(plans)), ("finished", String(stuck))])
            shared.announceWork()
        }
    }
}
