import HaulCore
import HaulPostgres

/// Keeping two transfers (or a transfer and a user) from writing one file.
extension TransferStore {
    /// The states of a transfer that may still write its destination.
    static let activeStates = ["pending", "planning", "downloading", "finalizing", "paused"]

    /// Takes the transaction-scoped lock every enqueue holds while it checks and inserts destinations,
    /// so two enqueues of one destination cannot both see it free.
    static func lockDestinations(_ db: PostgresConnection) throws {
        try db.query("SELECT pg_advisory_xact_lock(7235842)")
    }

    /// Refuses a destination that an active transfer (other than a `haul get`) already targets.
    /// Call inside the enqueue transaction, after `lockDestinations`.
    static func refuseBusy(_ dest: String, _ db: PostgresConnection) throws {
        guard
            let row = try db.query(
                Statements.TransferStore.refuseBusy,
                [dest, activeStates]
            ).first
        else { return }
        throw busy(dest, id: try row.int64("id"), state: try row.string("state"))
    }

    /// The refusals to bring transfers `ids` back (retry) while another active transfer writes
    /// their destination, by id; a transfer nothing else writes is left out. One statement for
    /// any number of ids.
    func busyDestinations(retrying ids: [Int64]) throws -> [Int64: HaulError] {
        guard !ids.isEmpty else { return [:] }
        var refusals: [Int64: HaulError] = [:]
        for row in try db.query(Statements.TransferStore.busyForRetry, [ids, Self.activeStates]).rows {
            refusals[try row.int64("retried")] = Self.busy(try row.string("dest"), id: try row.int64("id"), state: try row.string("state"))
        }
        return refusals
    }

    /// The unfinished transfers among `ids` whose partial file another transfer may have written
    /// since they stopped: one of the same destination and generation (so the same partial file
    /// name) that had started and was still moving after this one last wrote. Resuming such a
    /// transfer would keep its segments marked done over bytes the other wrote, and publish a mix
    /// of two files; `retry` and a rerun `haul get` start it over instead (`startOver`). Judged
    /// by name alone (two `haul get`s into different folders may share one), so a needless
    /// start-over costs bytes, never a mix.
    ///
    /// A transfer's last write is its segments' last checkpoint (its row's time only when it has
    /// none): the row's `updated_at` is moved by housekeeping too (a rescuer, in any process,
    /// moves a download stopped after its last segment to `finalizing` seconds later), and would
    /// then hide writes the other made before that. The other's last move is its row's time or
    /// its segments', whichever is later: its checkpoints leave its row alone.
    public func partialsWrittenByOthers(among ids: [Int64]) throws -> Set<Int64> {
        Set(
            try db.query(
                Statements.TransferStore.partialsWrittenByOthers, [ids]
            ).rows.map { try $0.int64("id") })
    }

    /// Starts transfers `ids` over as a new generation, pending, whose files have other names
    /// than whatever a late cleanup still deletes (and than the partial file another transfer
    /// wrote). A name the origin gave is forgotten: the origin names the file again, and the
    /// name is checked again. The old generation's segments stay behind, never claimed again.
    /// For transfers no worker runs: failed or canceled ones, or a `haul get`'s being adopted.
    public func startOver(_ ids: [Int64]) throws {
        try db.query(
            Statements.TransferStore.startOver, [ids])
    }

    /// The `destination-busy` refusal naming the transfer that holds `dest`.
    static func busy(_ dest: String, id: Int64, state: String) -> HaulError {
        HaulError(
            .destinationBusy, "transfer \(id) (\(state)) already writes '\(dest)'",
            hint: "wait for it ('haul wait \(id)'), cancel it, or choose another destination")
    }

    /// Gives an unfinished `haul get` transfer the options of the command that resumes it (digest,
    /// headers, priority, finalizer options), so a rerun never fails again on stale ones. The
    /// layout and the segments already planned stay as they are.
    public func revise(_ id: Int64, to request: NewTransfer) throws {
        try db.query(
            Statements.TransferStore.revise, [id, request.checksum?.description, Header.json(request.headers), request.options.json, request.priority])
    }

    /// Whether an earlier `haul get` of `url` finished writing `localTarget` (so the file there is haul's own).
    private func finishedGet(url: String, localTarget: String) throws -> Bool {
        try !db.query(
            Statements.TransferStore.finishedGet,
            [url, localTarget]
        ).rows.isEmpty
    }

    /// Whether the history says an earlier finished `haul get` of `url` saved the file `name`
    /// (what decides where the file system keeps no marks): one of the names the origin gave it
    /// in its folder, which a get named by the origin carries (`options.replaceable`), else the
    /// file its `-o FILE` named (`options.localTarget`).
    public func getSaved(_ name: String, url: String, options: TransferOptions) throws -> Bool {
        if let names = options.replaceable { return names.contains { $0.sameBytes(as: name) } }
        guard let localTarget = options.localTarget else { return false }
        return try finishedGet(url: url, localTarget: localTarget)
    }

    /// The files that finished `haul get`s of each of `urls` saved in the folder `localTarget`
    /// (gets whose files the origin names), as destinations relative to that folder, by URL.
    public func namesSavedByGets(urls: [String], localTarget: String) throws -> [ExactText: [String]] {
        var names: [ExactText: [String]] = [:]
        for row in try db.query(
            Statements.TransferStore.namesSavedByGets, [urls, localTarget]
        ).rows {
            names[ExactText(try row.string("url")), default: []].append(try row.string("dest"))
        }
        return names
    }

    /// The file or folder each `haul get` transfer of `ids` saves to, by id; transfers enqueued for
    /// the workers are left out. One statement for any number of ids.
    public func localTargets(of ids: [Int64]) throws -> [Int64: String] {
        guard !ids.isEmpty else { return [:] }
        var targets: [Int64: String] = [:]
        for row in try db.query(Statements.TransferStore.localTarget, [ids]).rows {
            targets[try row.int64("id")] = try row.string("target")
        }
        return targets
    }

    /// Where the partial data of a canceled `haul get` transfer waits to be removed.
    public struct LocalFiles: Sendable {
        /// The folder the get saved into.
        public let root: String
        /// Its destination in there.
        public let dest: String
        public let generation: Int
    }

    /// The canceled `haul get` transfers among `ids` whose partial data nobody removed yet, by
    /// id: where their files are, read without claiming them. Other transfers are left out.
    /// One statement for any number of ids: a batch cancel of 10 000 transfers pays one round
    /// trip here, not one each.
    public func localCleanups(_ ids: [Int64]) throws -> [Int64: LocalFiles] {
        guard !ids.isEmpty else { return [:] }
        var found: [Int64: LocalFiles] = [:]
        for row in try db.query(Statements.TransferStore.localCleanup, [ids]).rows {
            found[try row.int64("id")] = try Self.localFiles(row)
        }
        return found
    }

    /// The partial data of canceled get `id` (as `localCleanups` finds it), marking it removed:
    /// the caller removes it. `nil` when there is none, or another process took it.
    public func claimLocalCleanup(_ id: Int64) throws -> LocalFiles? {
        try db.query(
            Statements.TransferStore.claimLocalCleanup, [id]
        ).first.map(Self.localFiles)
    }

    private static func localFiles(_ row: PostgresRow) throws -> LocalFiles {
        let dest = try row.string("dest")
        let target = try row.string("target")
        // By bytes: as `Character`s, the `/` before a name that starts with a combining mark is part of the name's first (`PathText`).
        let root = String(decoding: target.utf8.dropLast(target.endsWithSlash ? 1 : dest.utf8.count + 1), as: UTF8.self)
        return LocalFiles(root: root, dest: dest, generation: try row.int("generation"))
    }
}
