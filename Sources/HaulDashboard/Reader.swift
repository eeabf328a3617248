import Foundation
import HaulCore
import HaulPostgres
import HaulQueue

/// What a page shows, read through the queue's named queries, and how long reading took
/// (which sets how soon the page polls again).
struct Reader {
    let db: PostgresConnection
    let query: [String: String]

    /// The last page number accepted (a bigger one would overflow the offset).
    static let maxPage = 1_000_000

    /// The charts' window the query asks for (`window=`).
    var window: ChartWindow { ChartWindow.named(query["window"]) }

    /// The overview: states, the window's bytes and queue per point, live workers, failures, hosts.
    struct Overview {
        var window: ChartWindow
        var counts: [TransferState: Int]
        var throughput: [(minute: Int64, bytes: Int64)]
        var queue: [(minute: Int64, pending: Int64?, downloading: Int64?, segmentsQueued: Int64?)]
        var workers: [FleetView.WorkerInfo]
        var failures: [FleetView.FailureReason]
        var hosts: [FleetView.HostLoad]
        var pollAfter: Int
    }

    func overview() throws -> Overview {
        let started = Date()
        let view = FleetView(db)
        let window = self.window
        // A point's bytes add up its minutes; its queue is its last sample. (A point has at least one minute.)
        let throughput = window.points(try view.throughput(minutes: window.minutes)) { minutes in
            (minute: minutes[minutes.startIndex].minute, bytes: minutes.map(\.bytes).reduce(0, +))
        }
        let queue = window.points(try view.queueDepth(minutes: window.minutes)) { minutes in
            let sample = minutes.last { $0.pending != nil }
            return (
                minute: minutes[minutes.startIndex].minute, pending: sample?.pending, downloading: sample?.downloading, segmentsQueued: sample?.segmentsQueued
            )
        }
        var result = Overview(
            window: window, counts: try view.transferCounts(), throughput: throughput, queue: queue,
            workers: try view.workers(includeStopped: false), failures: try view.failureReasons(), hosts: try view.hostLoads(), pollAfter: 0)
        result.pollAfter = Self.pollAfter(Date().timeIntervalSince(started))
        return result
    }

    /// A page of the transfer list and the filter that chose it.
    struct TransferPage {
        var filter: FleetView.TransferFilter
        var rows: [FleetView.TransferRow]
        var total: Int
        var page: Int
        var perPage: Int
        var order: (column: FleetView.TransferOrder, ascending: Bool) = (.id, false)
        var pollAfter: Int
        /// Why each unfinished transfer of the page does not run, as `haul list` says it
        /// (`WaitReason`), by id; one that runs or is finished is absent.
        var waiting: [Int64: WaitReason] = [:]
    }

    func transfers() throws -> TransferPage {
        let started = Date()
        func value(_ name: String) -> String? {
            query[name].flatMap { $0.trimmingWhitespace().isEmpty ? nil : $0.trimmingWhitespace() }
        }
        // A host as `haul list --host` reads it (`a.example:443` is `a.example`); one that is no
        // host name at all is kept as typed, and matches nothing.
        let host = value("host").map { (try? HostLimits.parse(host: $0)) ?? $0 }
        let filter = FleetView.TransferFilter(
            state: value("state").flatMap(TransferState.init(rawValue:)), batch: value("batch"), host: host, text: value("q"))
        let (page, perPage, offset) = Self.paging(query)
        let only = value("ids").map { $0.split(separator: ",").compactMap { Int64($0) } }
        let order = (column: value("sort").flatMap(FleetView.TransferOrder.init(rawValue:)) ?? .id, ascending: value("dir") == "asc")
        let (rows, total) = try FleetView(db).transfers(filter, offset: offset, limit: perPage, only: only, order: order)
        let waiting = try WaitReason.of(db, transfers: rows.filter { !$0.status.state.isFinal }.map(\.status.id))
        return TransferPage(
            filter: filter, rows: rows, total: total, page: page, perPage: perPage, order: order,
            pollAfter: Self.pollAfter(Date().timeIntervalSince(started)), waiting: waiting)
    }

    /// Bytes per point of the window, per worker or per origin (`FleetView.throughputBy`).
    func throughputBy(_ key: FleetView.ThroughputKey) throws -> [(name: String, bytes: [Int64])] {
        let window = self.window
        return try FleetView(db).throughputBy(key, minutes: window.minutes).map { line in
            (line.name, window.points(line.bytes) { $0.reduce(0, +) })
        }
    }

    /// One batch's page: its summary, failures by reason and a page of its transfers.
    struct BatchDetail {
        var summary: Batches.Summary
        var failures: [FleetView.FailureReason]
        var transfers: TransferPage
    }

    func batch(_ name: String) throws -> BatchDetail? {
        guard let summary = try Batches(db).summary(name) else { return nil }
        var own = query
        own["batch"] = name
        return BatchDetail(summary: summary, failures: try FleetView(db).failureReasons(batch: name), transfers: try Reader(db: db, query: own).transfers())
    }

    /// The page number, page size and row offset a query asks for, clamped to what can be served.
    static func paging(_ query: [String: String]) -> (page: Int, perPage: Int, offset: Int) {
        let perPage = min(Dashboard.maxPerPage, max(1, query["per"].flatMap { Int($0) } ?? Dashboard.perPage))
        let page = min(maxPage, max(1, query["page"].flatMap { Int($0) } ?? 1))
        return (page, perPage, (page - 1) * perPage)
    }

    /// One transfer with everything the transfer page shows.
    struct TransferDetail {
        var status: TransferStatus
        var host: String
        var batch: String?
        var segments: [FleetView.SegmentDetail]
        var history: [FleetView.TransferEvent]
        /// Its mirrors in priority order (none without `--mirror` or a Metalink).
        var mirrors: [MirrorStatus]
        /// Why it does not run, as `haul status` says it (`WaitReason`), nil while it runs or is finished.
        var waiting: WaitReason?
        var pollAfter: Int
    }

    func transfer(_ id: Int64) throws -> TransferDetail? {
        let started = Date()
        guard let status = try TransferStore(db).status(id), let place = try FleetView(db).place(of: id) else { return nil }
        let view = FleetView(db)
        return TransferDetail(
            status: status, host: place.host, batch: place.batch, segments: try view.segments(of: id), history: try view.history(of: id),
            mirrors: try TransferStore(db).mirrors(of: id), waiting: try WaitReason.of(db, transfers: [id])[id],
            pollAfter: Self.pollAfter(Date().timeIntervalSince(started)))
    }

    /// Milliseconds until the page polls again: as `haul wait`, at most a tenth of the time on
    /// the database, and never more often than once a second (nor less than every 10 s).
    static func pollAfter(_ cost: Double) -> Int {
        Int(min(10, max(1, cost * 10)) * 1000)
    }
}

/// Seconds until a transfer finishes at its current average rate, if it is downloading.
func eta(_ status: TransferStatus) -> Double? {
    guard status.state == .downloading, let size = status.size, let rate = status.rate, rate > 0 else { return nil }
    return Double(max(0, size - status.bytesDone)) / rate
}

/// `1h 02m`, `3m 05s`, `42s`.
func formatSeconds(_ seconds: Double) -> String {
    let total = Int(seconds.rounded())
    if total >= 3600 { return "\(total / 3600)h \(String(format: "%02d", total % 3600 / 60))m" }
    if total >= 60 { return "\(total / 60)m \(String(format: "%02d", total % 60))s" }
    return "\(total)s"
}

/// The operator actions a transfer in `state` allows, in button order.
func allowedActions(_ state: TransferState) -> [OperatorAction] {
    [OperatorAction.pause, .resume, .retry, .cancel].filter { $0.allowedFrom.contains(state) }
}
