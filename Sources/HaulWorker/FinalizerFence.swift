import HaulCore
import HaulQueue
import HaulStorage

/// The finalizer's side of `Storage.publish`: its lease (`LeaseKeeper`), the rule against
/// overwriting others' files, and what the storage has it record, fenced by the lease.
final class FinalizerFence: PublishFence {
    private let claim: TransferLeases.Claim
    private let keeper: LeaseKeeper
    private let config: WorkerConfig
    private let database: ResilientConnection

    /// The fence of finalizing `claim`, whose lease `keeper` renews.
    init(claim: TransferLeases.Claim, keeper: LeaseKeeper, config: WorkerConfig, database: ResilientConnection) {
        self.claim = claim
        self.keeper = keeper
        self.config = config
        self.database = database
    }

    var isLost: Bool { keeper.isLost }

    func check() throws { try keeper.check() }

    func renew() throws { try keeper.renew() }

    func refuseOthers() throws { try OthersFiles.refuse(claim.info.dest ?? "", of: claim, config: config, database: database) }

    func record(_ event: PublishEvent) throws {
        switch event {
        case .publishing:
            let marked = try database.run(patient: true) { conn in try TransferLeases(conn, workerID: config.workerID).markPublishing(claim) }
            guard marked else { throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now") }
        case .uploadCompleted:
            try database.run(patient: true) { conn in try TransferLeases(conn, workerID: config.workerID).forgetObjectUpload(claim) }
        }
    }

    func verify(_ actual: Checksum) throws -> String? { try claim.info.verified(actual) }
}
