import HaulCore

/// What an S3-compatible store answers that Haul tells apart.
extension HaulError.Code {
    /// Any other S3 failure; the message names the operation and the store's own code.
    public static let s3: Self = "s3"
    /// 403 or `SignatureDoesNotMatch`: the message names the key id and endpoint, never the secret.
    public static let s3Auth: Self = "s3-auth"
    /// No credentials could be found in the environment or `~/.aws/credentials`.
    public static let s3Credentials: Self = "s3-credentials"
    /// The bucket does not exist.
    public static let s3NoBucket: Self = "s3-no-bucket"
    /// The multipart upload is gone (completed, aborted or expired).
    public static let s3NoUpload: Self = "s3-no-upload"
    /// A `PutObject` found the object changed since it looked (412): another writer stored it meanwhile.
    public static let s3ObjectChanged: Self = "s3-object-changed"
    /// A part the completion names is missing from the upload.
    public static let s3PartMissing: Self = "s3-part-missing"
    /// The bucket lives in another region than the one signed for.
    public static let s3Region: Self = "s3-region"
    /// The file cannot be cut into parts within S3's limits.
    public static let s3TooLarge: Self = "s3-too-large"
    /// `SlowDown`, 500 or 503: retried with backoff.
    public static let s3Unavailable: Self = "s3-unavailable"
    /// The origin does not say how large the file is, and an S3 upload needs sizes.
    public static let s3UnknownSize: Self = "s3-unknown-size"
    /// A feature that S3 storage does not offer yet, or a request the store does not implement
    /// (`501 NotImplemented`; not retried, but for an optional feature Haul then leaves out).
    public static let s3Unsupported: Self = "s3-unsupported"
    /// The upload was lost while the transfer ran.
    public static let s3UploadLost: Self = "s3-upload-lost"
}
