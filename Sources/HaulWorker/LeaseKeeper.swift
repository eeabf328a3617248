import Foundation
import HaulCore
import HaulPostgres
import HaulQueue

/// Keeps a finalizer's lease on its transfer alive for as long as it works, from a thread of
/// its own (renewing on the worker's housekeeping connection, never the finalizer's): long copies, `fdatasync`s, digests, extractions and
/// uploads block the finalizer's thread for longer than a lease, so renewing only between
/// steps let the lease run out under load and another finalizer start over, again and again.
/// The finalizer calls `check()` between steps (it throws once a renewal found the lease gone)
/// and `renew()` right before it publishes.
final class LeaseKeeper: @unchecked Sendable {
    // `condition` guards `stopped`, `lost` and `thread`.
    private let condition = NSCondition()
    private var stopped = false
    private var lost = false
    private var thread: ServiceThread?
    private let lane: Lane
    private let claim: TransferLeases.Claim

    /// Starts renewing `claim`'s lease every `heartbeat`.
    init(lane: Lane, claim: TransferLeases.Claim) {
        self.lane = lane
        self.claim = claim
        let config = lane.shared.config
        let link = lane.shared.leaseRenewalLink
        let service = ServiceThread("lease-keeper") { [self, claim] in
            condition.lock()
            while !stopped {
                _ = condition.wait(until: Date(timeIntervalSinceNow: config.heartbeat))
                if stopped { break }
                condition.unlock()
                // An unreachable database is not a lost lease: keep trying; the fenced writes decide.
                let held: Bool? = try? link.withConnection { conn in
                    try TransferLeases(conn, workerID: config.workerID).renew(claim, lease: config.lease)
                }
                condition.lock()
                if held == false { lost = true }
            }
            condition.unlock()
        }
        condition.lock()
        thread = service
        condition.unlock()
    }

    /// Ends the renewals (the finalizer is done with the transfer, one way or the other) and
    /// joins the thread; a renewal still waiting on an unreachable database is given one
    /// heartbeat, after which the thread ends on its own when the database answers.
    func stop() {
        condition.lock()
        stopped = true
        let service = thread
        condition.broadcast()
        condition.unlock()
        service?.join(until: .now() + lane.shared.config.heartbeat)
    }

    /// Whether a renewal found another finalizer holding the transfer.
    var isLost: Bool {
        condition.lock()
        defer { condition.unlock() }
        return lost
    }

    /// Throws `lease-lost` once a renewal found another finalizer holding the transfer.
    func check() throws {
        if isLost { throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now") }
    }

    /// Renews now on the finalizer's own connection (the fence right before publishing).
    func renew() throws {
        let config = lane.shared.config
        let held = try lane.database.run { conn in try TransferLeases(conn, workerID: config.workerID).renew(claim, lease: config.lease) }
        guard held else { throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now") }
    }
}
