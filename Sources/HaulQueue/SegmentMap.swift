/// A transfer's segments squeezed into a fixed number of columns, as `haul status` and the
/// dashboard draw them: each column shows the least advanced state of its group of segments
/// (failed, then running, then queued, else done).
public enum SegmentMap {
    /// At most `width` columns (fewer when there are fewer segments).
    public static func columns(_ segments: [SegmentState], width: Int) -> [SegmentState] {
        guard !segments.isEmpty, width > 0 else { return [] }
        let count = min(width, segments.count)
        return (0..<count).map { column in
            let group = segments[(column * segments.count / count)..<((column + 1) * segments.count / count)]
            if group.contains(.failed) { return .failed }
            if group.contains(.running) { return .running }
            if group.contains(.queued) { return .queued }
            return .done
        }
    }

    /// One character per column: `#` done, `>` running, `.` queued, `!` failed.
    public static func text(_ segments: [SegmentState], width: Int) -> String {
        String(columns(segments, width: width).map(symbol))
    }

    /// The character of one state.
    public static func symbol(_ state: SegmentState) -> Character {
        switch state {
        case .done: return "#"
        case .running: return ">"
        case .queued: return "."
        case .failed: return "!"
        }
    }
}
