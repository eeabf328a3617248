import HaulPostgres

/// The cluster's queue figures, from one definition that the Prometheus gauges, `haul workers`
/// and `haul status` share, so that they agree with each other and with the tables.
///
/// - Segments by state count the current generation of every unfinished transfer
///   (pending, planning, downloading, finalizing, paused): what `haul status` sums over those
///   transfers. Segments of finished transfers are history and are not counted.
/// - Queue depth is the queued segments whose next attempt is due now.
/// - A segment is held by the worker named in its row while it is `running`.
public struct QueueFigures: Sendable, Equatable {
    /// Segments by state (`queued`, `running`, `done`, `failed`), every state present.
    public var segments: [String: Int]
    /// Queued segments due now.
    public var due: Int

    /// Reads the figures in one statement (one snapshot). Cheap with a million finished rows:
    /// it starts from the unfinished transfers and the partial index of queued segments.
    public static func sample(_ db: PostgresConnection) throws -> QueueFigures {
        let row = try db.query(
            Statements.QueueFigures.sample
        ).first
        var segments: [String: Int] = [:]
        for state in SegmentState.allCases { segments[state.rawValue] = try row?.int(state.rawValue) ?? 0 }
        return QueueFigures(segments: segments, due: try row?.int("due") ?? 0)
    }
}
