import HaulCore
import HaulPostgres

/// The probe of a transfer with mirrors: the host slot it holds follows the mirror it probes.
extension TransferLeases {
    /// Has `claim`'s row hold a slot of `host` for a probe there (a mirror's host other than the
    /// one where it holds its slot, or a batch's small file that holds none): the slot it holds
    /// moves there in one statement, when `host` has a free slot (`HostLimits`).
    /// - Returns: whether the row holds a slot of `host` now; false when `host` is at its limit
    ///   (or the lease was lost).
    public func holdProbeSlot(_ claim: Claim, host: String) throws -> Bool {
        try db.query(Statements.TransferLeases.addOriginHost, [host])
        return try db.query(
            Statements.TransferLeases.holdProbeSlot, [claim.info.id, claim.leaseToken, host, HostLimits.fallbackDefault]
        ).affectedRows == 1
    }

    /// Hands `claim` back unprobed, without costing it an attempt, to be tried again in `delay`
    /// seconds: every mirror left to probe was on a host at its limit.
    public func deferProbe(_ claim: Claim, delay: Double) throws {
        try db.query(Statements.TransferLeases.deferProbe, [claim.info.id, claim.leaseToken, delay])
    }
}
