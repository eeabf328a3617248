import HaulCore

/// What an S3-compatible store answers that Haul tells apart.
extension HaulError.Code {
    /// Any other S3 failure; the message names the operation and the store's own code.
    ///
    /// Read the operation and the store's own code in the message.
    public static let s3 = Self("s3", exit: ExitStatus.failure)
    /// 403 or `SignatureDoesNotMatch`: the message names the key id and endpoint, never the secret.
    ///
    /// Check the key id (named in the message) and its secret, and that the key may use the bucket.
    public static let s3Auth = Self("s3-auth", exit: ExitStatus.failure)
    /// No credentials were found along the AWS credential chain, or its source failed (a
    /// profile that is missing or incomplete, an SSO login that lapsed, a `credential_process` that failed or
    /// printed no credentials, STS refusing a role, an unreadable token file).
    ///
    /// Read the source named in the message; set `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`,
    /// or `AWS_PROFILE` to a working profile.
    public static let s3Credentials = Self("s3-credentials", exit: ExitStatus.failure)
    /// The store refused the session token (`ExpiredToken`, `InvalidToken`,
    /// `TokenRefreshRequired`) even after Haul fetched new credentials from their source.
    ///
    /// Renew the credentials where they come from (a new `AWS_SESSION_TOKEN`, `aws sso login`, the
    /// `credential_process`), or give Haul a source it can refresh itself (a profile, a role).
    public static let s3ExpiredToken = Self("s3-expired-token", exit: ExitStatus.failure)
    /// The bucket does not exist.
    ///
    /// Create the bucket, or fix its name in the `s3://` location.
    public static let s3NoBucket = Self("s3-no-bucket", exit: ExitStatus.failure)
    /// The multipart upload is gone (completed, aborted or expired).
    ///
    /// `haul retry ID` starts the upload over; check bucket lifecycle rules that abort incomplete uploads.
    public static let s3NoUpload = Self("s3-no-upload", exit: ExitStatus.failure)
    /// A `PutObject` found the object changed since it looked (412): another writer stored it meanwhile.
    ///
    /// Check who else writes that key; `--force` replaces the object.
    public static let s3ObjectChanged = Self("s3-object-changed", exit: ExitStatus.failure)
    /// A part the completion names is missing from the upload.
    ///
    /// `haul retry ID` uploads it again.
    public static let s3PartMissing = Self("s3-part-missing", exit: ExitStatus.failure)
    /// The bucket lives in another region than the one signed for.
    ///
    /// Set `AWS_REGION` to the bucket's region (the message names it when the store says).
    public static let s3Region = Self("s3-region", exit: ExitStatus.failure)
    /// The file cannot be cut into parts within S3's limits.
    ///
    /// Store the file on a folder instead: it exceeds S3's object size limits.
    public static let s3TooLarge = Self("s3-too-large", exit: ExitStatus.failure)
    /// `SlowDown`, 500 or 503: retried with backoff.
    ///
    /// Nothing unless it keeps happening: retried with backoff; then check the store's health.
    public static let s3Unavailable = Self("s3-unavailable", exit: ExitStatus.failure)
    /// The origin does not say how large the file is, and an S3 upload needs sizes.
    ///
    /// Download to a folder instead, or from an origin that sends `Content-Length`.
    public static let s3UnknownSize = Self("s3-unknown-size", exit: ExitStatus.failure)
    /// A feature that S3 storage does not offer yet, or a request the store does not implement
    /// (`501 NotImplemented`; not retried, but for an optional feature Haul then leaves out).
    ///
    /// Use a folder as storage for this feature, or a store that implements the request.
    public static let s3Unsupported = Self("s3-unsupported", exit: ExitStatus.failure)
    /// The upload was lost while the transfer ran.
    ///
    /// `haul retry ID` starts the upload over.
    public static let s3UploadLost = Self("s3-upload-lost", exit: ExitStatus.failure)
}

// The list `HaulError.Code(stored:among:)` reads stored codes back with; ErrorCodeTests checks
// that it holds every code declared above.
extension HaulError.Code {
    /// Every code the S3 module declares.
    public static let s3Codes: [Self] = [
        .s3, .s3Auth, .s3Credentials, .s3ExpiredToken, .s3NoBucket, .s3NoUpload, .s3ObjectChanged, .s3PartMissing, .s3Region, .s3TooLarge, .s3Unavailable,
        .s3UnknownSize, .s3Unsupported, .s3UploadLost,
    ]
}
