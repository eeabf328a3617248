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

    /// One state-changing statement: where it is, its event, and its guard.
    struct Site {
        let file: String
        let function: String
        let event: String
        let guarding: Guard
    }

    static let transferStates = Set(TransferState.allCases.map(\.rawValue))
    static let segmentStates = Set(SegmentState.allCases.map(\.rawValue))

    /// Every statement that changes a state, in source order within each function.
    static let sites: [Site] = [
        Site(file: "OperatorActions.swift", function: "refetchMismatched", event: "refetched", guarding: .transfer(["done"])),
        Site(file: "OperatorActions.swift", function: "write", event: "cancel", guarding: .locked),
        Site(file: "OperatorActions.swift", function: "write", event: "transferEnded", guarding: .sql),
        Site(file: "OperatorActions.swift", function: "write", event: "retry", guarding: .locked),
        Site(file: "OperatorActions.swift", function: "write", event: "retried", guarding: .sql),
        Site(file: "OperatorActions.swift", function: "write", event: "pause", guarding: .locked),
        Site(file: "OperatorActions.swift", function: "write", event: "resume", guarding: .locked),
        Site(file: "SegmentLeases.swift", function: "claimStatement", event: "claimed", guarding: .sql),  // wait: false
        Site(file: "SegmentLeases.swift", function: "claimStatement", event: "claimed", guarding: .sql),  // wait: true
        Site(file: "SegmentLeases.swift", function: "complete", event: "lastSegmentDone", guarding: .sql),
        Site(file: "SegmentLeases.swift", function: "markDone", event: "completed", guarding: .sql),
        Site(file: "SegmentLeases.swift", function: "release", event: "released", guarding: .sql),
        Site(file: "SegmentLeases.swift", function: "fail", event: "fetchFailed", guarding: .sql),
        Site(file: "SegmentLeases.swift", function: "rescueExpired", event: "released", guarding: .sql),
        Site(file: "TransferLeases+Batch.swift", function: "finish", event: "probeFinished", guarding: .sql),
        Site(file: "TransferLeases+Failures.swift", function: "postpone", event: "planningReleased", guarding: .sql),
        Site(file: "TransferLeases+Failures.swift", function: "failChecksum", event: "failed", guarding: .lease(["finalizing"])),
        Site(file: "TransferLeases+Failures.swift", function: "refetch", event: "partsMissing", guarding: .sql),
        Site(file: "TransferLeases+Failures.swift", function: "refetch", event: "refetched", guarding: .transfer(["done"])),
        Site(file: "TransferLeases+Failures.swift", function: "failTransfer", event: "failed", guarding: .sql),
        Site(file: "TransferLeases+Failures.swift", function: "failTransfer", event: "transferEnded", guarding: .sql),
        Site(file: "TransferLeases+Failures.swift", function: "finishStuckDownloads", event: "lastSegmentDone", guarding: .sql),
        Site(file: "TransferLeases+Failures.swift", function: "rescueExpired", event: "planningReleased", guarding: .sql),
        Site(file: "TransferLeases+History.swift", function: "finishUnchanged", event: "probeFinished", guarding: .sql),
        Site(file: "TransferLeases+StartOver.swift", function: "startOver", event: "originChanged", guarding: .sql),
        Site(file: "TransferLeases+StartOver.swift", function: "startOver", event: "transferEnded", guarding: .sql),
        Site(file: "TransferLeases+StartOver.swift", function: "startOver", event: "failed", guarding: .sql),
        Site(file: "TransferLeases+StartOver.swift", function: "startOver", event: "transferEnded", guarding: .sql),
        Site(file: "TransferLeases.swift", function: "slotClaim", event: "planningClaimed", guarding: .sql),
        Site(file: "TransferLeases.swift", function: "writePlan", event: "planWritten", guarding: .sql),
        Site(file: "TransferLeases.swift", function: "finish", event: "finished", guarding: .sql),
        Site(file: "TransferLeases.swift", function: "release", event: "planningReleased", guarding: .sql),
        Site(file: "TransferStore+Destinations.swift", function: "startOver", event: "retry", guarding: .locked),
        Site(file: "TransferStore.swift", function: "adopt", event: "released", guarding: .sql),
    ]

    /// The statements of the sources that change a state, each read. The claims are assembled
    /// from pieces (`planningLease`, `picked`), so they are read as their functions build them.
    static func statements() throws -> [(file: String, function: String, read: StatementGuard)] {
        let states = ["transfers": transferStates, "segments": segmentStates]
        var found: [(file: String, function: String, read: StatementGuard)] = try SourceStatement.all().compactMap { statement in
            StatementGuard(statement.text, states: states).map { (file: statement.file, function: statement.function, read: $0) }
        }.filter { !$0.read.targets.isEmpty }
        // `restClaim` leases its rows and leaves their state alone (`leaseOnlyClaim` checks it).
        let claims = [("slotClaim", TransferLeases.slotClaim(wait: false, limit: 10, scope: .fleet))]
        if let index = found.firstIndex(where: { $0.function == "claimStatement" }) {
            let built = [false, true].map { StatementGuard(SegmentLeases.claimStatement(wait: $0, limit: 10, scope: .fleet), states: states)! }
            found.replaceSubrange(index...index, with: built.map { (file: "SegmentLeases.swift", function: "claimStatement", read: $0) })
        }
        for (function, text) in claims {
            let index = found.firstIndex { $0.file == "TransferLeases.swift" && ["writePlan", "finish", "release"].contains($0.function) } ?? found.endIndex
            found.insert((file: "TransferLeases.swift", function: function, read: StatementGuard(text, states: states)!), at: index)
        }
        return found
    }

    @Test("every statement that changes a state is one of the table's events, writes only states it may enter, and leaves only states it may leave")
    func guardsMatchTheTables() throws {
        let found = try Self.statements()
        #expect(
            found.map { "\($0.file) \($0.function)" } == Self.sites.map { "\($0.file) \($0.function)" },
            "a state-changing statement was added, moved or removed: list it in `sites`")
        for (statement, site) in zip(found, Self.sites) {
            let place = "\(site.file) \(site.function) (\(site.event))"
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
        // Guards that are not a lease holder's: a canceled transfer's clean-up is claimed, and a
        // rerun `haul get` revises its transfer while it is neither done nor canceled.
        let others: [String: Set<String>] = [
            "claimCleanups": ["canceled"], "claimLocalCleanup": ["canceled"],
            "revise": Self.transferStates.subtracting(["done", "canceled"]),
        ]
        var checked = 0
        for statement in try SourceStatement.all() {
            guard let read = StatementGuard(statement.text, states: states), read.targets.isEmpty, let from = read.from else { continue }
            checked += 1
            let allowed = others[statement.function] ?? leased[read.table]!
            #expect(from.isSubset(of: allowed), "\(statement.file) \(statement.function) compares \(from.sorted()), not \(allowed.sorted())")
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
