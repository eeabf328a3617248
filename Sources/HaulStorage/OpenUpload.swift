/// The uploads a storage holds open (S3 multipart uploads under its prefix), as its listing
/// shows them, for the sweep that aborts those no transfer will complete.
public struct OpenUploads: Sendable, Equatable {
    /// Where they are (the bucket), as the planner's `StorageIntent`s name it.
    public let container: String
    /// The uploads.
    public let uploads: [OpenUpload]

    /// The uploads open in `container`.
    public init(container: String, uploads: [OpenUpload]) {
        self.container = container
        self.uploads = uploads
    }
}

/// One open upload.
public struct OpenUpload: Sendable, Equatable {
    /// Its key in the container.
    public let key: String
    /// Its id.
    public let uploadID: String
    /// When it was begun (ISO 8601, as the store says).
    public let initiated: String

    /// An upload at `key`.
    public init(key: String, uploadID: String, initiated: String) {
        self.key = key
        self.uploadID = uploadID
        self.initiated = initiated
    }
}
