import HaulCore
import HaulPostgres

extension FleetView {
    /// Which transfers a page shows; nil fields do not filter.
    public struct TransferFilter: Sendable, Equatable {
        public var state: TransferState?
        public var batch: String?
        public var host: String?
        /// Matched case-insensitively against the URL and destination, or exactly against the id.
        public var text: String?

        public init(state: TransferState? = nil, batch: String? = nil, host: String? = nil, text: String? = nil) {
            self.state = state
            self.batch = batch
            self.host = host
            self.text = text
        }
    }

    /// The column a transfer list is sorted by; ties go newest first.
    public enum TransferOrder: String, Sendable, CaseIterable {
        case id, state, size, attempts

        /// The ORDER BY of this column, `ascending` or not, over `TransferStatus.select` (`SQL/FleetView/transferPage.sql`).
        func sql(ascending: Bool) -> String {
            let column =
                switch self {
                case .id: "t.id"
                case .state: "t.state"
                case .size: "t.size"
                case .attempts: "attempts"
                }
            let direction = ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST"
            return self == .id ? "t.id \(direction)" : "\(column) \(direction), t.id DESC"
        }
    }

    /// One row of the transfer list: its status plus where it belongs.
    public struct TransferRow: Sendable {
        public let status: TransferStatus
        public let host: String
        public let batch: String?
        /// Segment states in file order (the current generation).
        public let segments: [SegmentState]
    }

    /// Transfers matching `filter`, newest first, `limit` from `offset`, and how many match in all.
    /// With `only`, the rows are those transfers instead (a page that is already shown, polled
    /// for updates: its rows stay even when they no longer match), and `total` still counts the filter.
    /// `order` sorts them (newest first by default).
    public func transfers(
        _ filter: TransferFilter, offset: Int, limit: Int, only: [Int64]? = nil, order: (column: TransferOrder, ascending: Bool) = (.id, false)
    ) throws -> (rows: [TransferRow], total: Int) {
        let text = filter.text.map {
            $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
        }
        let parameters: [any PostgresBindable] = [filter.state?.rawValue, filter.batch, filter.host, text]
        let total = try db.query(Statements.FleetView.transferCount, parameters).first?.int("n") ?? 0
        let statuses: [TransferStatus]
        if let only {
            statuses = try db.query(Statements.FleetView.chosenTransfers, [Array(only.prefix(limit))])
                .rows.map(TransferStatus.init)
        } else {
            statuses = try db.query(
                Statements.FleetView.transferPage(order: order.column.sql(ascending: order.ascending)),
                parameters + [max(0, offset), max(1, limit)]
            ).rows.map(TransferStatus.init)
        }
        let ids = statuses.map(\.id)
        var places: [Int64: (host: String, batch: String?)] = [:]
        for row in try db.query(
            Statements.FleetView.places, [ids]
        ).rows {
            places[try row.int64("id")] = (try row.string("host"), row["batch"])
        }
        var segments: [Int64: [SegmentState]] = [:]
        for row in try db.query(
            Statements.FleetView.segmentStates, [ids]
        ).rows {
            if let state = SegmentState(rawValue: try row.string("state")) { segments[try row.int64("transfer_id"), default: []].append(state) }
        }
        let rows = statuses.map {
            TransferRow(status: $0, host: places[$0.id]?.host ?? "", batch: places[$0.id]?.batch ?? nil, segments: segments[$0.id] ?? [])
        }
        return (rows, total)
    }

    /// One segment of a transfer's current generation, for the transfer's page.
    public struct SegmentDetail: Sendable {
        public let index: Int
        public let state: SegmentState
        public let offset: Int64
        public let length: Int64?
        public let bytesDone: Int64
        public let attempts: Int
        /// The worker holding it (running) or that last held it.
        public let worker: String?
        /// Why its last attempt failed, made safe to show (`SafeText.cleanLine`).
        public let lastError: String?
    }

    /// The segments of transfer `id`'s current generation, in file order.
    public func segments(of id: Int64) throws -> [SegmentDetail] {
        try db.query(
            Statements.FleetView.segments, [id]
        ).rows.map {
            SegmentDetail(
                index: try $0.int("idx"), state: SegmentState(rawValue: try $0.string("state")) ?? .failed, offset: try $0.int64("byte_offset"),
                length: try $0.optionalInt64("length"), bytesDone: try $0.int64("bytes_done"), attempts: try $0.int("attempts"),
                worker: $0["worker_id"], lastError: $0["last_error"].map(SafeText.cleanLine))
        }
    }

    /// One change of a transfer's state.
    public struct TransferEvent: Sendable {
        public let at: String
        public let from: String
        public let to: String
        /// Why it failed, made safe to show (`SafeText.cleanLine`).
        public let error: String?
    }

    /// Transfer `id`'s changes of state, oldest first (at most the last `limit`).
    public func history(of id: Int64, limit: Int = 200) throws -> [TransferEvent] {
        try db.query(
            Statements.FleetView.history, [id, limit]
        ).rows.map {
            TransferEvent(
                at: try $0.string("at"), from: try $0.string("from_state"), to: try $0.string("to_state"), error: $0["error"].map(SafeText.cleanLine))
        }
    }

    /// Where transfer `id` belongs: its origin host and batch name.
    public func place(of id: Int64) throws -> (host: String, batch: String?)? {
        try db.query(Statements.FleetView.place, [id]).first.map {
            (try $0.string("host"), $0["batch"])
        }
    }
}
