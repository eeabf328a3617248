import HaulPostgres

/// The cheap question an idle lane asks before its claim statements: what is there that a
/// worker could take? Each claim is a statement PostgreSQL must plan (every time behind a
/// transaction-mode pooler, where nothing stays prepared); this one reads four partial indexes
/// that are empty when the fleet is idle, and the lane then runs only the claims that could
/// find something (a batch of small files has no segments: its claims are planning claims).
public enum WorkProbe {
    /// The kinds of work `whatToDo` found, one for each kind of claim.
    public struct Kinds: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// A segment is queued (for a segment claim).
        public static let queuedSegments = Kinds(rawValue: 1)
        /// A segment is running (a straggler a fetcher may split).
        public static let runningSegments = Kinds(rawValue: 2)
        /// A transfer is pending and not held by a batch claim (for a planning claim).
        public static let pendingTransfers = Kinds(rawValue: 4)
        /// A transfer is finalizing (for a finalizing claim).
        public static let finalizingTransfers = Kinds(rawValue: 8)
        /// Every kind: what a lane looks for when it did not ask.
        public static let all: Kinds = [.queuedSegments, .runningSegments, .pendingTransfers, .finalizingTransfers]
    }

    /// Which kinds of work exist, for any worker. Empty means every claim would find nothing
    /// now; a kind in it only that its claim might find something (the work may be another
    /// scope's, not yet due, or paused).
    public static func whatToDo(_ db: PostgresConnection) throws -> Kinds {
        guard
            let row = try db.query(Statements.WorkProbe.whatToDo).first
        else { return .all }
        var kinds: Kinds = []
        if try row.bool("queued") { kinds.insert(.queuedSegments) }
        if try row.bool("running") { kinds.insert(.runningSegments) }
        if try row.bool("pending") { kinds.insert(.pendingTransfers) }
        if try row.bool("finalizing") { kinds.insert(.finalizingTransfers) }
        return kinds
    }
}
