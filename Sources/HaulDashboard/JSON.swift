import Foundation
import HaulCore
import HaulQueue

/// The JSON API's objects (`GET /api/…`), built from the same values as the pages.
enum JSON {
    /// Width of the segment map in the list (as `haul status` draws it).
    static let mapWidth = 60

    static func transfer(_ status: TransferStatus, host: String, batch: String?, segments: [SegmentState]) -> [String: Any] {
        [
            "id": status.id, "url": status.url, "dest": status.dest ?? NSNull(), "state": status.state.rawValue, "host": host,
            "batch": batch ?? NSNull(), "size": status.size ?? NSNull(), "bytes_done": status.bytesDone,
            "rate": status.rate.map { ($0 * 10).rounded() / 10 } ?? NSNull(), "eta_seconds": eta(status).map { $0.rounded() } ?? NSNull(),
            "attempts": status.attempts, "error": status.error ?? NSNull(), "error_code": status.errorCode ?? NSNull(),
            "segments": ["total": status.segmentCount, "done": status.segmentsDone, "running": status.segmentsRunning],
            "segment_map": SegmentMap.text(segments, width: mapWidth), "actions": allowedActions(status.state).map(\.rawValue),
            "created_at": status.createdAt, "finished_at": status.finishedAt ?? NSNull(), "unchanged": status.unchanged,
            "shown_bytes": shownBytes(status), "claimed_by": status.claimedBy ?? NSNull(),
        ]
    }

    /// The bytes a progress bar shows: those fetched, or the whole size of a file the origin
    /// answered `304 Not Modified` for (kept whole, nothing fetched).
    static func shownBytes(_ status: TransferStatus) -> Int64 {
        status.unchanged ? status.size ?? status.bytesDone : status.bytesDone
    }

    static func hosts(_ hosts: [FleetView.HostLoad]) -> [[String: Any]] {
        hosts.map { ["host": $0.host, "limit": $0.limit, "explicit": $0.explicit, "running": $0.running, "queued": $0.queued, "paused": $0.limit == 0] }
    }

    /// `GET /api/batches/NAME`: `haul status --batch NAME --json`'s figures and failures by reason.
    static func batch(_ batch: Reader.BatchDetail) -> [String: Any] {
        let summary = batch.summary
        return [
            "batch": summary.name, "total": summary.total, "states": TransferState.named(summary.countsByState), "bytes_done": summary.bytesDone,
            "bytes_known": summary.bytesKnown, "rate": summary.rate ?? NSNull(), "finished": summary.isFinished,
            "failures": batch.failures.map { ["code": $0.code, "count": $0.count, "example": $0.example] },
        ].merging(batchShown(summary.name, counts: summary.countsByState)) { $1 }
    }

    /// `GET /api/batches`: each batch as `haul batches --json` prints it, with what its row shows.
    static func batches(_ rows: [FleetView.BatchRow]) -> [[String: Any]] {
        rows.map { $0.json.merging(batchShown($0.name, counts: $0.countsByState)) { $1 } }
    }

    /// What a batch's row or page shows and asks, for app.js to update them in place:
    /// `shown_states` (the states it has, in order, with their counts) and `actions` (per
    /// action, how many transfers it would change and the question it asks first).
    static func batchShown(_ name: String, counts: [TransferState: Int]) -> [String: Any] {
        [
            "shown_states": TransferState.allCases.compactMap { state in counts[state].map { ["state": state.rawValue, "count": $0] as [String: Any] } },
            "actions": Dictionary(
                uniqueKeysWithValues: [OperatorAction.pause, .resume, .retry, .cancel].map { action in
                    let touched = Pages.touched(action, counts: counts)
                    return (action.rawValue, ["touched": touched, "confirm": Pages.question(batch: name, action, touched: touched)] as [String: Any])
                }),
        ]
    }
}

extension Reader.Overview {
    var json: [String: Any] {
        [
            "states": TransferState.named(counts), "throughput": throughput.map { ["minute": $0.minute, "bytes": $0.bytes] },
            "window": window.name, "step_seconds": window.step * 60,
            "workers_alive": workers.filter { $0.state == "alive" }.count, "workers": workers.map(\.json),
            "failures": failures.map { ["code": $0.code, "count": $0.count, "example": $0.example] }, "hosts": JSON.hosts(hosts),
            "poll_after_ms": pollAfter,
        ]
    }
}

extension Reader.TransferPage {
    var json: [String: Any] {
        [
            "total": total, "page": page, "per_page": perPage, "poll_after_ms": pollAfter,
            "transfers": rows.map { row in
                var object = JSON.transfer(row.status, host: row.host, batch: row.batch, segments: row.segments)
                object["waiting"] = waiting[row.status.id]?.text ?? NSNull()
                object["waiting_reason"] = waiting[row.status.id]?.code ?? NSNull()
                return object
            },
        ]
    }
}

extension Reader.TransferDetail {
    var json: [String: Any] {
        var object = JSON.transfer(status, host: host, batch: batch, segments: segments.map(\.state))
        object["etag"] = status.etag ?? NSNull()
        object["last_modified"] = status.lastModified ?? NSNull()
        object["expected_digest"] = status.expectedDigest ?? NSNull()
        object["digest"] = status.computedDigest ?? NSNull()
        object["segment_list"] = segments.map {
            [
                "index": $0.index, "state": $0.state.rawValue, "offset": $0.offset, "length": $0.length ?? NSNull(), "bytes_done": $0.bytesDone,
                "attempts": $0.attempts, "worker": $0.worker ?? NSNull(), "last_error": $0.lastError ?? NSNull(),
            ] as [String: Any]
        }
        object["history"] = history.map { ["at": $0.at, "from": $0.from, "to": $0.to, "error": $0.error ?? NSNull()] as [String: Any] }
        object["waiting"] = waiting?.text ?? NSNull()
        object["waiting_reason"] = waiting?.code ?? NSNull()
        object["poll_after_ms"] = pollAfter
        return object
    }
}
