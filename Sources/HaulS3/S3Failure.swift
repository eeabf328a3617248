import HaulCore

/// What an S3 error answer means for a user, never naming the secret.
public enum S3Failure {
    /// The error for an answer of `status` with S3 error `code` (`nil` for a body-less HEAD
    /// answer) to `doing` (e.g. "create an upload for s3://b/k"). `bucketRegion` is the
    /// `x-amz-bucket-region` header, when the server sent one. The server chooses `code`,
    /// `message` and `bucketRegion`: they are made safe to show (`SafeText.cleanLine`) here.
    public static func error(
        status: Int, code: String?, message: String?, bucketRegion: String?, doing: String, bucket: String, config: S3Config
    ) -> HaulError {
        let code = code.map(SafeText.cleanLine)
        let message = message.map(SafeText.cleanLine)
        let bucketRegion = bucketRegion.map(SafeText.cleanLine)
        let detail = [code, message].compactMap { $0 }.joined(separator: ": ")
        let said = detail.isEmpty ? "HTTP \(status)" : "HTTP \(status) \(detail)"
        let endpoint = config.endpoint
        if let bucketRegion, bucketRegion != config.region, [301, 400, 403].contains(status) || code == "AuthorizationHeaderMalformed" {
            return HaulError(
                .s3Region, "cannot \(doing): bucket '\(bucket)' is in region \(bucketRegion), not \(config.region)",
                hint: "set AWS_REGION=\(bucketRegion)")
        }
        switch (status, code ?? "") {
        case (_, "NoSuchBucket"),
            (404, "") where doing.hasPrefix("reach bucket"):
            return HaulError(
                .s3NoBucket, "cannot \(doing): bucket '\(bucket)' does not exist at \(endpoint)",
                hint: "create the bucket, or check the bucket name and AWS_ENDPOINT_URL")
        case (_, "PermanentRedirect"), (301, _), (_, "AuthorizationHeaderMalformed"):
            return HaulError(
                .s3Region, "cannot \(doing): bucket '\(bucket)' is in another region than \(config.region) (\(said))",
                hint: "set AWS_REGION to the bucket's region")
        case (400...403, let named) where CredentialProvider.tokenCodes.contains(named):
            return expiredToken(doing: doing, why: "answered \(said): the session token is expired or not valid", config: config)
        case (400, "") where config.credentials.hasSessionToken:
            let why = "answered HTTP 400 without a reason, as S3 answers a HEAD signed with an expired session token (ExpiredToken)"
            return expiredToken(doing: doing, why: why, config: config)
        case (403, _), (_, "SignatureDoesNotMatch"), (_, "InvalidAccessKeyId"), (_, "AccessDenied"):
            return HaulError(
                .s3Auth, "cannot \(doing): \(endpoint) refused \(config.credentials) (\(said))",
                hint: "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the key's permissions on bucket '\(bucket)'")
        case (501, _), (_, "NotImplemented"):
            return HaulError(
                .s3Unsupported, "cannot \(doing): \(endpoint) does not implement this request (\(said))",
                hint: "use an S3 store that implements it; see docs/guide-object-storage.md for what Haul needs")
        case (500...599, _), (_, "SlowDown"), (_, "InternalError"), (_, "RequestTimeout"), (_, "ServiceUnavailable"):
            return HaulError(.s3Unavailable, "cannot \(doing): \(endpoint) answered \(said)", transient: true)
        case (412, _), (_, "PreconditionFailed"):
            return HaulError(
                .s3ObjectChanged, "cannot \(doing): the object changed while it was being written (\(said))",
                hint: "another writer stored it meanwhile", transient: true)
        case (_, "BadDigest"), (_, "XAmzContentChecksumMismatch"), (_, "InvalidDigest"):
            return HaulError(
                .checksumMismatch, "checksum mismatch: \(endpoint) refused the bytes for \(doing.replacingOccurrences(of: "put ", with: "")) (\(said))",
                hint: "check the published digest")
        case (_, "NoSuchUpload"):
            return HaulError(.s3NoUpload, "cannot \(doing): the multipart upload is gone (\(said))", hint: "the transfer starts its upload over")
        default:
            return HaulError(.s3, "cannot \(doing): \(endpoint) answered \(said)")
        }
    }

    /// The store refused the session token; retried when the source can give new credentials.
    private static func expiredToken(doing: String, why: String, config: S3Config) -> HaulError {
        let refreshable = if case .fixed = config.credentials.source { false } else { true }
        return HaulError(
            .s3ExpiredToken, "cannot \(doing): \(config.endpoint) \(why) (\(config.credentials))",
            hint: refreshable
                ? "Haul fetches new credentials and tries again; if this stays, renew them at their source"
                : "set a new session token with its keys (AWS_SESSION_TOKEN or the profile's aws_session_token), or use a source Haul can refresh",
            transient: refreshable)
    }
}
