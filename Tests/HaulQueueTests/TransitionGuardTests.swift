import Testing

@testable import HaulQueue

/// Every statement of HaulQueue that changes `transfers.state` or `segments.state`, read from
/// its text, against the transition tables: it writes only states its event may enter, and
/// its guard lets it leave only states its event may leave.
@Suite("transition guards in SQL")
struct TransitionGuardTests {
    /// How a statement is kept from leaving a state its event may not leave.
    enum Guard {
        /// Its own text compares the state (`state IN (…)`): the test reads it.
        case sql
        /// Only its lease token: the row's lease is held only in these states.
        case lease(Set<String>)
        /// An operator action: the row is locked and `OperatorAction.verdict` judges its state
        /// from the table first.
        case locked
        /// A segment write guarded by its transfer's lease or state: the segments are in these states.
        case transfer(Set<String>)
    }

    /// One state-changing statement: where it is (`Area/name.sql` for a statement of
    /// `Sources/HaulQueue/SQL/`, `File.swift function` for one still written in Swift), its event, and its guard.
    struct Site {
        let place: String
        let event: String
        let guarding: Guard

        init(_ place: String, event: String, guarding: Guard) {
            self.place = place
            self.event = event
            self.guarding = guarding
        }
    }

    static let transferStates = Set(TransferState.allCases.map(\.rawValue))
    static let segmentStates = Set(SegmentState.allCases.map(\.rawValue))

    /// Every statement that changes a state: the `.sql` files in name order, then those still
    /// in Swift in source order within each function.
    static let sites: [Site] = [
        Site("OperatorActions/cancel.sql", event: "cancel", guarding: .locked),
        Site("OperatorActions/cancelSegments.sql", event: "transferEnded", guarding: .sql),
        Site("OperatorActions/pause.sql", event: "pause", guarding: .locked),
        Site("OperatorActions/refetchMismatched.sql", event: "refetched", guarding: .transfer(["done"])),
        Site("OperatorActions/resume.sql", event: "resume", guarding: .locked),
        Site("OperatorActions/retry.sql", event: "retry", guarding: .locked),
        Site("OperatorActions/retrySegments.sql", event: "retried", guarding: .sql),
        Site("SegmentLeases/completeTransfer.sql", event: "lastSegmentDone", guarding: .sql),
        Site("SegmentLeases/fail.sql", event: "fetchFailed", guarding: .sql),
        Site("SegmentLeases/markDone.sql", event: "completed", guarding: .sql),
        Site("SegmentLeases/release.sql", event: "released", guarding: .sql),
        Site("SegmentLeases/rescueExpired.sql", event: "released", guarding: .sql),
        Site("TransferLeases/abandonSegments.sql", event: "transferEnded", guarding: .sql),
        Site("TransferLeases/deferProbe.sql", event: "planningReleased", guarding: .sql),
        Site("TransferLeases/failChecksum.sql", event: "failed", guarding: .lease(["finalizing"])),
        Site("TransferLeases/failGeneration.sql", event: "transferEnded", guarding: .sql),
        Site("TransferLeases/failSegments.sql", event: "transferEnded", guarding: .sql),
        Site("TransferLeases/failStartedOver.sql", event: "failed", guarding: .sql),
        Site("TransferLeases/failTransfer.sql", event: "failed", guarding: .sql),
        Site("TransferLeases/finish.sql", event: "finished", guarding: .sql),
        Site("TransferLeases/finishStuckDownloads.sql", event: "lastSegmentDone", guarding: .sql),
        Site("TransferLeases/finishUnchanged.sql", event: "probeFinished", guarding: .sql),
        Site("TransferLeases/holdProbeSlot.sql", event: "planningClaimed", guarding: .sql),
        Site("TransferLeases/postpone.sql", event: "planningReleased", guarding: .sql),
        Site("TransferLeases/refetchSegments.sql", event: "refetched", guarding: .transfer(["done"])),
        Site("TransferLeases/refetchTransfer.sql", event: "partsMissing", guarding: .sql),
        Site("TransferLeases/release.sql", event: "planningReleased", guarding: .sql),
        Site("TransferLeases/rescueExpiredPlanning.sql", event: "planningReleased", guarding: .sql),
        Site("TransferLeases/startOverTransfer.sql", event: "originChanged", guarding: .sql),
        Site("TransferLeases/writePlan.sql", event: "planWritten", guarding: .sql),
        Site("TransferStore/adoptSegments.sql", event: "released", guarding: .sql),
        Site("TransferStore/startOver.sql", event: "retry", guarding: .locked),
        Site("SegmentLeases.swift claimStatement", event: "claimed", guarding: .sql),
        Site("TransferLeases+Batch.swift finish", event: "probeFinished", guarding: .sql),
        Site("TransferLeases.swift slotClaim", event: "planningClaimed", guarding: .sql),
    ]

    /// The text of every statement: each `.sql` file (placeholders as written), then each string
    /// literal of the Swift sources; `key` is the file's or the function's name.
    static func texts() throws -> [(place: String, key: String, text: String)] {
        let files = Statements.all.map { (place: "\($0.name).sql", key: String($0.name.split(separator: "/")[1]), text: $0.sql) }
        return try files + SourceStatement.all().map { (place: "\($0.file) \($0.function)", key: $0.function, text: $0.text) }
    }

    /// The statements that change a state, each read. The claims are assembled from pieces
    /// (`planningLease`, `picked`), so they are read as their functions build them.
    static func statements() throws -> [(place: String, read: StatementGuard)] {
        let states = ["transfers": transferStates, "segments": segmentStates]
        var found: [(place: String, read: StatementGuard)] = try texts().compactMap { statement in
            StatementGuard(statement.text, states: states).map { (place: statement.place, read: $0) }
        }.filter { !$0.read.targets.isEmpty }
        // `restClaim` leases its rows and leaves their state alone (`leaseOnlyClaim` checks it).
        let claims = [("TransferLeases.swift slotClaim", TransferLeases.slotClaim(limit: 10, scope: .fleet))]
        if let index = found.firstIndex(where: { $0.place == "SegmentLeases.swift claimStatement" }) {
            let built = StatementGuard(SegmentLeases.claimStatement(limit: 10, scope: .fleet), states: states)!
            found[index] = (place: "SegmentLeases.swift claimStatement", read: built)
        }
        let index = found.firstIndex { !$0.place.hasSuffix(".sql") && $0.place > "TransferLeases.swift" } ?? found.endIndex
        found.insert(contentsOf: claims.map { (place: $0.0, read: StatementGuard($0.1, states: states)!) }, at: index)
        return found
    }

    @Test("every statement that changes a state is one of the table's events, writes only states it may enter, and leaves only states it may leave")
    func guardsMatchTheTables() throws {
        let found = try Self.statements()
        #expect(
            found.map(\.place) == Self.sites.map(\.place),
            "a state-changing statement was added, moved or removed: list it in `sites`")
        for (statement, site) in zip(found, Self.sites) {
            let place = "\(site.place) (\(site.event))"
            let read = statement.read
            let rule: (from: Set<String>, to: Set<String>)
            if read.table == "transfers", let event = TransferEvent(rawValue: site.event) {
                let row = TransferTransitions.rule(event)
                rule = (Set(row.from.map(\.rawValue)), Set(row.to.map(\.rawValue)))
            } else if read.table == "segments", let event = SegmentEvent(rawValue: site.event) {
                let row = SegmentTransitions.rule(event)
                rule = (Set(row.from.map(\.rawValue)), Set(row.to.map(\.rawValue)))
            } else {
                Issue.record("\(place): no event of that name for \(read.table)")
                continue
            }
            #expect(
                !read.targets.isEmpty && read.targets.isSubset(of: rule.to), "\(place) writes \(read.targets.sorted()), the table allows \(rule.to.sorted())")
            switch site.guarding {
            case .sql:
                #expect(
                    read.from != nil && read.from!.isSubset(of: rule.from),
                    "\(place) leaves \(read.from?.sorted() ?? []), the table allows \(rule.from.sorted())")
            case .lease(let states), .transfer(let states):
                #expect(read.from == nil && states.isSubset(of: rule.from), "\(place)")
            case .locked:
                #expect(read.from == nil && read.table == "transfers" && OperatorAction(rawValue: site.event) != nil, "\(place)")
            }
        }
    }

    @Test("an update that leaves the state alone compares only states where its lease is held (or names why not)")
    func leaseGuards() throws {
        let states = ["transfers": Self.transferStates, "segments": Self.segmentStates]
        // A planner's lease is held in `planning` (a small file's of a batch claim in `pending`), a
        // finalizer's in `finalizing`, a fetcher's in `running`.
        let leased = [
            "transfers": Set(TransferTransitions.rule(.planningClaimed).to.union(TransferTransitions.rule(.finished).from).map(\.rawValue) + ["pending"]),
            "segments": Set(SegmentTransitions.rule(.claimed).to.map(\.rawValue)),
        ]
        // Guards that are not a lease holder's: a canceled transfer's clean-up is claimed, a
        // rerun `haul get` revises its transfer while it is neither done nor canceled, and a
        // fetcher's late checkpoint records its bytes on a segment the rescuer put back in the
        // queue still under its token (the fence is the token, not the clock), and a holder lets
        // go the piece a straggler split cut off its segment, still queued (its own segment's
        // state is compared under its lease).
        let others: [String: Set<String>] = [
            "claimCleanups": ["canceled"], "claimLocalCleanup": ["canceled"], "checkpoint": ["running", "queued"], "settleCut": ["queued"],
            "revise": Self.transferStates.subtracting(["done", "canceled"]),
        ]
        var checked = 0
        for statement in try Self.texts() {
            guard let read = StatementGuard(statement.text, states: states), read.targets.isEmpty, let from = read.from else { continue }
            checked += 1
            let allowed = others[statement.key] ?? leased[read.table]!
            #expect(from.isSubset(of: allowed), "\(statement.place) compares \(from.sorted()), not \(allowed.sorted())")
        }
        #expect(checked >= 6)
    }

    @Test("a batch claim's small files are leased without a change of state: no indexed column is written")
    func leaseOnlyClaim() {
        let states = ["transfers": Self.transferStates, "segments": Self.segmentStates]
        let text = TransferLeases.restClaim(scope: .fleet)
        #expect(StatementGuard(text, states: states)?.targets ?? [] == [])
        let set = text.components(separatedBy: " SET ")[1].components(separatedBy: "WHERE")[0]
        for column in ["state", "holds_slot", "host", "dest", "owner", "batch_id", "url", "options", "priority"] {
            #expect(set.range(of: "\\b\(column) =", options: .regularExpression) == nil, "restClaim sets \(column)")
        }
    }

    @Test("every event of both tables is applied by some statement")
    func everyEventHasAStatement() {
        let applied = Set(Self.sites.map(\.event))
        for event in TransferEvent.allCases { #expect(applied.contains(event.rawValue), "\(event)") }
        for event in SegmentEvent.allCases { #expect(applied.contains(event.rawValue), "\(event)") }
    }

    @Test("a guard is read from the text: IN, <>, a conditional assignment, and subqueries over the other table left out")
    func reading() {
        let states = ["transfers": Self.transferStates, "segments": Self.segmentStates]
        let failing = StatementGuard("UPDATE transfers SET state = 'failed' WHERE id = $1 AND state IN ('pending','planning')", states: states)
        #expect(failing?.targets == ["failed"] && failing?.from == ["pending", "planning"])
        let release = StatementGuard("UPDATE transfers SET state = CASE WHEN state = 'planning' THEN 'pending' ELSE state END WHERE id = $1", states: states)
        #expect(release?.targets == ["pending"] && release?.from == ["planning"])
        let stop = StatementGuard("UPDATE segments SET state = 'failed' WHERE transfer_id = $1 AND state <> 'done'", states: states)
        #expect(stop?.from == ["queued", "running", "failed"])
        let complete = StatementGuard(
            "UPDATE transfers SET state = 'finalizing' WHERE id = $1 AND state = 'downloading' AND NOT EXISTS (SELECT 1 FROM segments WHERE state <> 'done')",
            states: states)
        #expect(complete?.from == ["downloading"])
        let kept = StatementGuard("UPDATE transfers SET layout = 's3' WHERE state = 'planning'", states: states)
        #expect(kept?.targets == [] && kept?.from == ["planning"])
        #expect(StatementGuard("SELECT state FROM transfers WHERE state = 'planning'", states: states) == nil)
    }
}
