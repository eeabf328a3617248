import HaulCore
import HaulQueue
import HaulStorage
import Synchronization

/// The finalizer's `ExtractionJournal`: records extracted keys and their open uploads in the
/// database under the finalizing lease, one at a time (zip entries are written by several
/// threads; the connection is not shared).
final class ExtractionRecorder: ExtractionJournal, @unchecked Sendable {
    private let database: ResilientConnection
    private let workerID: String
    private let claim: TransferLeases.Claim
    private let lock = Mutex<Void>(())

    /// The journal of finalizing `claim`, by worker `workerID`, on `database`.
    init(database: ResilientConnection, workerID: String, claim: TransferLeases.Claim) {
        self.database = database
        self.workerID = workerID
        self.claim = claim
    }

    func record(_ key: String) throws -> Bool {
        try locked { leases, claim in try leases.recordExtractedObject(claim, key: key) }
    }

    func recordUpload(_ key: String, uploadID: String?) throws -> Bool {
        try locked { leases, claim in try leases.recordExtractedUpload(claim, key: key, uploadID: uploadID) }
    }

    func recorded() throws -> [JournaledEntry] {
        try lock.withLock { _ in
            try database.run(patient: true) { conn in
                try TransferLeases(conn, workerID: workerID).extractedObjects(of: claim).map { JournaledEntry(key: $0.key, uploadID: $0.uploadID) }
            }
        }
    }

    func forgetRecorded() throws -> Bool {
        try locked { leases, claim in try leases.forgetExtractedObjects(claim) }
    }

    /// Runs `write` on the journal's connection, one writer at a time.
    private func locked(_ write: (TransferLeases, TransferLeases.Claim) throws -> Bool) throws -> Bool {
        try lock.withLock { _ in
            try database.run(patient: true) { conn in try write(TransferLeases(conn, workerID: workerID), claim) }
        }
    }
}
