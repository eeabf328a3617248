import HaulCore
import HaulPostgres

/// The history of earlier transfers as the planners ask it: which files Haul wrote at a
/// destination, and the earlier version of a file that a conditional probe asks the origin
/// against (an incremental re-mirror), with the outcome of a `304`.
extension TransferLeases {
    /// Whether an earlier fleet transfer of `claim`'s URL was done writing `dest`: the file there is
    /// then an older copy of this transfer's own, which it may replace (a re-mirror).
    public func urlWroteBefore(_ dest: String, of claim: Claim) throws -> Bool {
        try !db.query(
            Statements.TransferLeases.urlWroteBefore,
            [claim.info.url, dest, claim.info.id]
        ).rows.isEmpty
    }

    /// Whether an earlier done fleet transfer, of any URL, wrote `dest` (the history, for a
    /// file system that keeps no marks): a file there is then one Haul published.
    public func destWrittenBefore(_ dest: String, of claim: Claim) throws -> Bool {
        try !db.query(
            Statements.TransferLeases.destWrittenBefore, [dest, claim.info.id]
        ).rows.isEmpty
    }

    /// The validators and size of an earlier done transfer of the same URL into the same place.
    public struct PreviousVersion: Sendable, Equatable {
        public let etag: String?
        public let lastModified: String?
        public let size: Int64
        /// The file it was saved as: where a transfer the origin names looks for it.
        public let dest: String

        /// A version known by its validators and size, saved as `dest`.
        public init(etag: String?, lastModified: String?, size: Int64, dest: String) {
            self.etag = etag
            self.lastModified = lastModified
            self.size = size
            self.dest = dest
        }
    }

    /// The newest earlier done transfer of the same URL into the same place, for a conditional
    /// probe (incremental re-mirror). The same place: the same destination on the fleet's
    /// storage, or for a `haul get`, the same local file (`options.localTarget`); a get of the
    /// URL into another folder, whose copy may be a newer version, says nothing of this one.
    /// A transfer the origin names has no destination yet: its earlier version is the file the
    /// newest earlier transfer of its URL that the origin named saved (a get's in the same
    /// folder), unless a transfer of another URL saved a file under that name since.
    public func previousVersion(of claim: Claim) throws -> PreviousVersion? {
        try previousVersions(of: [claim])[claim.info.id]
    }

    /// `previousVersion(of:)` for many claims, in one query for those with a destination and
    /// one for those the origin names, by transfer id.
    public func previousVersions(of claims: [Claim]) throws -> [Int64: PreviousVersion] {
        let named = claims.filter { $0.info.dest != nil }
        let unnamed = claims.filter { $0.info.dest == nil }
        var rows: [PostgresRow] = []
        if !named.isEmpty {
            rows += try db.query(
                Statements.TransferLeases.previousVersions,
                [
                    named.map { $0.info.id }, named.map { $0.info.url }, named.map { $0.info.dest ?? "" },
                    named.map { $0.info.options.localTarget as String? },
                ]
            ).rows
        }
        let gets = unnamed.filter { $0.info.options.localTarget != nil }
        if !gets.isEmpty { rows += try previousNamedByOrigin(gets, among: Self.earlierGets) }
        let fleet = unnamed.filter { $0.info.options.localTarget == nil }
        if !fleet.isEmpty { rows += try previousNamedByOrigin(fleet, among: Self.earlierFleetNames) }
        var versions: [Int64: PreviousVersion] = [:]
        for row in rows {
            versions[try row.int64("id")] = PreviousVersion(
                etag: row["etag"], lastModified: row["last_modified"], size: try row.int64("size"), dest: try row.string("dest"))
        }
        return versions
    }

    /// The done transfers of `c.url` whose names a get in folder `c.target` may know
    /// (through `transfers_local_target`): earlier gets the origin named in that folder. The
    /// state is compared as an expression, which `transfers_previous` (the done rows, by
    /// destination) cannot serve: with statistics older than the done rows, PostgreSQL judged
    /// that index empty and read all of it for each claim, 2 s for a batch on 50 000 rows.
    static let earlierGets = "(t.state || '') = 'done' AND t.options ? 'local_target' AND t.options->>'local_target' = c.target"
    /// Those of a fleet transfer the origin names (through `transfers_named_by_origin`, whose
    /// rows are done ones).
    static let earlierFleetNames = "t.state = 'done' AND t.options @> '{\"named_by_origin\": true}' AND t.owner IS NULL"

    /// The newest earlier version of each claim the origin names, among the done transfers of its
    /// URL that `earlier` (SQL on `t` and the claim `c`) admits; none where a transfer of another
    /// URL saved a file under that name in the same place after it (for the fleet, a fleet
    /// transfer; for a get, a get into that folder, or with `-o` that very file).
    private func previousNamedByOrigin(_ claims: [Claim], among earlier: String) throws -> [PostgresRow] {
        try db.query(
            Statements.TransferLeases.previousNamedByOrigin(earlier: earlier),
            [claims.map { $0.info.id }, claims.map { $0.info.url }, claims.map { $0.info.options.localTarget as String? }]
        ).rows
    }

    /// The origin answered `304 Not Modified`: the file on storage is current; done without a
    /// byte moved. `version` is the file kept (with the validators the answer refreshed), whose
    /// name a transfer the origin names takes.
    public func finishUnchanged(_ claim: Claim, kept version: PreviousVersion) throws -> Bool {
        let updated = try db.query(
            Statements.TransferLeases.finishUnchanged(namingOrigin: Self.namingOrigin()),
            [claim.info.id, claim.leaseToken, version.size, version.etag, version.lastModified, version.dest]
        ).affectedRows
        return try notifyingFinished(updated == 1)
    }

    /// The options of a row given its destination now (SQL on the row's values before the
    /// update, its columns prefixed with `row`): a fleet transfer without one is marked
    /// `named_by_origin`, as `writePlan` marks one the origin named, so that its next re-mirror
    /// finds the name again.
    static func namingOrigin(_ row: String = "") -> String {
        """
        CASE WHEN \(row)dest IS NULL AND \(row)owner IS NULL AND NOT \(row)options ? 'local_target'
             THEN \(row)options || '{"named_by_origin": true}'::jsonb ELSE \(row)options END
        """
    }
}
