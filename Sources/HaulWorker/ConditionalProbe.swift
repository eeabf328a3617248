import HaulCore
import HaulHTTP
import HaulQueue

/// An incremental re-mirror's probe, shared by the lone planner and the batch probe: the
/// request asks only for a version newer than the one on storage, and a `304` keeps it.
enum ConditionalProbe {
    /// Adds `If-None-Match` / `If-Modified-Since` for the version an earlier transfer left.
    static func ask(_ request: inout FetchRequest, ifChangedSince previous: TransferLeases.PreviousVersion?) {
        if let etag = previous?.etag { request.headerLines.append("If-None-Match: \(etag)") }
        if let modified = previous?.lastModified { request.headerLines.append("If-Modified-Since: \(modified)") }
    }

    /// The version a `304` confirms: the earlier one, with whatever validators the answer
    /// refreshed. A `304` to a request that asked nothing is the origin's fault (retried).
    static func unchanged(
        _ head: ResponseHead, previous: TransferLeases.PreviousVersion?
    ) throws -> (size: Int64, etag: String?, lastModified: String?) {
        guard let previous else {
            throw HaulError(.originStatus, "origin answered 304 Not Modified to an unconditional request", transient: true)
        }
        return (previous.size, head.etag ?? previous.etag, head["last-modified"] ?? previous.lastModified)
    }
}
