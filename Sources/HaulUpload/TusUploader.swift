import CCurl
import Foundation
import HaulCore
import HaulHTTP

/// Uploads a file with the resumable tus 1.0.0 protocol: create, then `PATCH` chunk by chunk,
/// asking the server (`HEAD`) where to continue after any failure.
public enum TusUploader {
    /// The protocol version sent as `Tus-Resumable` on every request.
    public static let version = "1.0.0"

    /// Uploads `request.file`, resuming `resumeURL` when given.
    ///
    /// Blocks the calling thread (never call it on the Swift concurrency pool); the process must
    /// have called `curl_global_init` once before. After a dropped connection or a 5xx it waits
    /// per `retry`, learns the offset with `HEAD` and goes on from there; `retry.attempts` bounds
    /// the failures in a row, and any chunk accepted starts the count again. A `resumeURL` the
    /// server no longer knows (404/410) is replaced by a new upload, reported via `onUploadURL`.
    /// Upload URLs (the server's `Location`, `resumeURL`) must be on the endpoint's scheme, host
    /// and port (``TusLocation``); any other fails with `bad-server` before a byte is sent there.
    /// - Parameters:
    ///   - resumeURL: an upload URL recorded from an earlier `onUploadURL`, or `nil` to create one.
    ///   - onUploadURL: called with the absolute upload URL as soon as the server created it;
    ///     persist it to resume after a crash. It is a capability: treat it as a secret.
    ///   - progress: called often with (bytes the server has or is receiving, file size).
    ///   - shouldCancel: polled during transfers and waits; true stops with error `canceled`.
    ///   All three closures run on the calling thread, inside libcurl callbacks: keep them short.
    /// - Returns: the answer to the last request: `204` of the final `PATCH`, usually; `201` of
    ///   the creation for an empty file; `200` of the `HEAD` when a resumed upload was complete.
    /// - Throws: ``HaulCore/HaulError`` — `upload-rejected` (3xx, 4xx but 408/409/423/429),
    ///   `server-error` or `network` (attempts spent), `tls`, `bad-url`, `upload-mismatch`,
    ///   `bad-server`, `file-changed`, `file-unreadable`, `canceled`, `usage`.
    public static func upload(
        _ request: TusRequest, resumeURL: String? = nil, retry: RetryPolicy = RetryPolicy(), mimeTypes: MimeTypes = MimeTypes(),
        onUploadURL: (String) -> Void, progress: ((_ sent: Int64, _ total: Int64) -> Void)? = nil, shouldCancel: (() -> Bool)? = nil
    ) throws -> UploadResponse {
        try request.validate()
        if let resumeURL { try TusLocation.check(resumeURL, endpoint: request.url) }
        let session = try TusSession(request, mimeTypes: mimeTypes, progress: progress, shouldCancel: shouldCancel)
        var loop = RetryLoop(policy: retry, shouldCancel: shouldCancel ?? { false })
        var uploadURL = resumeURL
        var mayRecreate = resumeURL != nil
        var offset: Int64?
        var last = UploadResponse(status: 0)
        while true {
            do throws(HaulError) {
                try session.checkFileUnchanged()
                guard let url = uploadURL else {
                    let created: String
                    (created, last) = try session.create()
                    onUploadURL(created)
                    (uploadURL, offset) = (created, 0)
                    continue
                }
                if offset == nil {
                    guard let (known, answer) = try session.offset(of: url) else {
                        guard mayRecreate else { throw session.mismatch("the server lost upload \(Redaction.url(url))") }
                        (mayRecreate, uploadURL) = (false, nil)
                        continue
                    }
                    (offset, last) = (known, answer)
                }
                guard let start = offset, start < session.size else { return last }
                let next: Int64
                (next, last) = try session.patch(url, from: start)
                offset = next
                loop.madeProgress()
            } catch {
                offset = nil
                try loop.failed(error)
            }
        }
    }
}
