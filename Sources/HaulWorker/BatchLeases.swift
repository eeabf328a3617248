import Foundation
import HaulQueue
import HaulStorage

/// The planning leases of one batch, and when the database last confirmed them (lane thread
/// only); the fence a storage's batch store checks (`BatchFence`).
final class BatchLeases: BatchFence {
    private let claims: [TransferLeases.Claim]
    private let database: ResilientConnection
    private let config: WorkerConfig
    /// The transfers the latest renewal found held; at first all of them, as just claimed.
    private var held: Set<Int64>
    /// `ProcessInfo.systemUptime` taken before the latest renewal was sent (at first: the batch's start).
    private var renewedAt = ProcessInfo.processInfo.systemUptime
    /// Whether a renewal has confirmed the leases yet (the claim's own time is not known here).
    private var confirmed = false

    init(claims: [TransferLeases.Claim], database: ResilientConnection, config: WorkerConfig) {
        self.claims = claims
        self.database = database
        self.config = config
        held = Set(claims.map { $0.info.id })
    }

    /// Renews the leases that are still held, and learns which those are.
    func renew() throws {
        let started = ProcessInfo.processInfo.systemUptime
        let config = config
        held = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).renew(claims, lease: config.lease) }
        renewedAt = started
        confirmed = true
    }

    /// Renews the leases once a heartbeat has passed since the last renewal.
    func renewIfDue() {
        if ProcessInfo.processInfo.systemUptime - renewedAt >= config.heartbeat { try? renew() }
    }

    /// Whether the latest renewal found transfer `id`'s lease held (no round trip): false once
    /// another worker has taken it over (or it was cancelled).
    func wasHeld(_ id: Int64) -> Bool {
        held.contains(id)
    }

    /// Of `ids`, the transfers whose leases the database says this worker holds now (a read,
    /// not a renewal: the batch renewed them a heartbeat ago at most).
    func heldNow(_ ids: [Int64]) throws -> Set<Int64> {
        let asked = Set(ids)
        let config = config
        let claims = claims.filter { asked.contains($0.info.id) }
        return try database.run(patient: true) { conn in try TransferLeases(conn, workerID: config.workerID).held(claims) }
    }

    /// Whether transfer `id`'s lease is certainly held for a while yet: confirmed less than half
    /// a lease ago, else asked again now.
    func isHeld(_ id: Int64) -> Bool {
        if !confirmed || ProcessInfo.processInfo.systemUptime - renewedAt >= config.lease / 2 {
            guard (try? renew()) != nil else { return false }
        }
        return held.contains(id)
    }
}
