import Foundation
import HaulCore
import HaulQueue

/// How a transfer's status is shown: JSON for scripts, text for people.
enum StatusView {
    /// The JSON object of `haul status --json` and of each `haul list --json` item.
    static func json(_ status: TransferStatus, segments: [SegmentState]? = nil) -> [String: Any] {
        var object: [String: Any] = [
            "id": status.id, "url": status.url, "unchanged": status.unchanged, "dest": status.dest ?? NSNull(), "state": status.state.rawValue,
            "size": status.size ?? NSNull(), "bytes_done": status.bytesDone, "error": status.error ?? NSNull(),
            "error_code": status.errorCode ?? NSNull(), "digest": status.computedDigest ?? NSNull(),
            "expected_digest": status.expectedDigest ?? NSNull(), "etag": status.etag ?? NSNull(),
            "priority": status.priority, "layout": status.layout.rawValue, "storage": status.storage ?? NSNull(), "attempts": status.attempts,
            "rate": status.rate.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
            "created_at": status.createdAt, "finished_at": status.finishedAt ?? NSNull(),
            "segments": ["total": status.segmentCount, "done": status.segmentsDone, "running": status.segmentsRunning],
            "last_modified": status.lastModified ?? NSNull(), "no_validator": status.hasNoValidator ?? NSNull(),
            "retry_in": status.retryIn.map { ($0 * 10).rounded(.up) / 10 } ?? NSNull(), "retry_reason": status.retryReason ?? NSNull(),
            "claimed_by": status.claimedBy ?? NSNull(),
        ]
        if let segments { object["segment_map"] = map(segments, width: segments.count) }
        return object
    }

    /// The multi-line text of `haul status ID`.
    static func text(_ status: TransferStatus, segments: [SegmentState]) -> String {
        var lines = [
            "transfer \(status.id): \(status.state.rawValue)\(status.unchanged ? " (unchanged at the origin, file kept)" : "")\(claimed(status))",
            "  url:       \(status.url)",
            "  dest:      \(status.dest.map(SafeText.cleanLine) ?? "(named from the response)")",
            "  progress:  \(progress(status))",
        ]
        if let rate = status.rate, status.state == .downloading { lines.append("  rate:      \(ByteSize.format(Int64(rate)))/s") }
        if !segments.isEmpty {
            lines.append("  segments:  \(status.segmentsDone)/\(status.segmentCount) done, \(status.segmentsRunning) running  [\(map(segments, width: 60))]")
        }
        if let digest = status.computedDigest { lines.append("  digest:    \(digest)") }
        if let expected = status.expectedDigest, status.computedDigest != expected { lines.append("  expected:  \(expected)") }
        if status.hasNoValidator == true {
            let digest = status.expectedDigest == nil ? "" : " and the digest"
            lines.append("  validator: none (no ETag, no Last-Modified): a new version is noticed only by its size\(digest)")
        }
        if let retry = retrying(status) { lines.append("  retrying:  \(retry)") }
        if let error = status.error, retrying(status) == nil || status.retryReason != error {
            lines.append(status.state == .done ? "  note:      \(error)" : "  error:     \(error)")
        }
        return lines.joined(separator: "\n")
    }

    /// ` (claimed by worker W, fetching in a batch)` for a small file a batch claim holds.
    static func claimed(_ status: TransferStatus) -> String {
        status.claimedBy.map { " (claimed by worker \($0), fetching in a batch)" } ?? ""
    }

    /// `in 4 s: origin answered 503 Service Unavailable for …` while a failed attempt waits to be retried.
    static func retrying(_ status: TransferStatus) -> String? {
        guard let seconds = status.retryIn, let reason = status.retryReason, !status.state.isFinal else { return nil }
        return "in \(Int(seconds.rounded(.up))) s: \(reason)"
    }

    /// `1.2 GiB / 4.0 GiB (30%)`; `4.0 GiB, unchanged` for a re-mirror the origin answered
    /// `304 Not Modified` for (its file was kept, so no byte was fetched, yet it is all there).
    static func progress(_ status: TransferStatus) -> String {
        if status.unchanged, let size = status.size { return "\(ByteSize.format(size)), unchanged" }
        guard let size = status.size else { return "\(ByteSize.format(status.bytesDone)) of unknown size" }
        let percent = size == 0 ? 100 : Int(Double(status.bytesDone) * 100 / Double(size))
        return "\(ByteSize.format(status.bytesDone)) / \(ByteSize.format(size)) (\(percent)%)"
    }

    /// One character per segment (`#` done, `>` running, `.` queued, `!` failed), squeezed to
    /// `width` characters by showing the least advanced state of each group.
    static func map(_ segments: [SegmentState], width: Int) -> String {
        SegmentMap.text(segments, width: width)
    }
}
