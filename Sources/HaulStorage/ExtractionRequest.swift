import HaulArchive

/// What `Storage.extract` needs of an `--extract`: the published archive, where its entries go
/// and within which limits.
public struct ExtractionRequest: Sendable {
    /// The archive's destination, relative to the storage.
    public var archive: String
    /// The folder (or prefix) its entries go under, relative to the storage.
    public var folder: String
    /// The archive's size.
    public var size: Int64
    /// The limits that refuse a hostile archive.
    public var limits: ExtractionLimits
    /// The transfer's id, for the log.
    public var transferID: Int64

    /// An extraction of `archive` under `folder`.
    public init(archive: String, folder: String, size: Int64, limits: ExtractionLimits, transferID: Int64) {
        self.archive = archive
        self.folder = folder
        self.size = size
        self.limits = limits
        self.transferID = transferID
    }
}

/// Where an extraction that writes entries as they arrive (into a bucket) records each key
/// before writing it, under the finalizing lease (the worker's journal), so that what a failed
/// or interrupted attempt wrote is removed. Called from several threads (zip entries).
public protocol ExtractionJournal: Sendable {
    /// Records `key` before anything is written to it. - Returns: false if the lease was lost.
    func record(_ key: String) throws -> Bool
    /// Records the multipart upload open for `key`, or with `nil` that it is closed.
    /// - Returns: false if the lease was lost.
    func recordUpload(_ key: String, uploadID: String?) throws -> Bool
    /// What earlier attempts recorded.
    func recorded() throws -> [JournaledEntry]
    /// Forgets what was recorded, once removed. - Returns: false if the lease was lost.
    func forgetRecorded() throws -> Bool
}

/// A key an extraction recorded, and the upload it left open there, if any.
public struct JournaledEntry: Sendable, Equatable {
    /// The key.
    public let key: String
    /// Its open multipart upload.
    public let uploadID: String?

    /// A recorded key.
    public init(key: String, uploadID: String?) {
        self.key = key
        self.uploadID = uploadID
    }
}
