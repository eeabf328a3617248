/// What happens to a transfer: the events of its life, from the planner's claim to an
/// operator's retry. Each names the code path that applies it.
public enum TransferEvent: String, Sendable, CaseIterable {
    /// A planner leases a pending transfer (`TransferLeases.claimPlanning`): the rows that hold a
    /// host slot move to `planning`, the rest of a batch stay `pending` under their leases (`restClaim`).
    case planningClaimed
    /// The planner wrote the plan: segments queued, or no segment at all for an empty file (`writePlan`).
    case planWritten
    /// The probe itself finished the file, or the origin answered `304` (`finish(probed:)`, `finishUnchanged`).
    /// A small file of a batch claim goes from `pending` (under its lease) to `done`; one whose
    /// cancel came after it was published goes from `canceled` to `done` ("canceled too late").
    case probeFinished
    /// A planning lease was handed back on shutdown or ran out (`release`, `rescueExpired`, `postpone`).
    case planningReleased
    /// The last segment completed (`SegmentLeases.complete`, or the rescuer after an outage).
    case lastSegmentDone
    /// The finalizer published the verified file and did what was asked after (`finish`).
    case finished
    /// Part files vanished before assembly: their segments go back to the fetchers (`requeueMissingParts`).
    case partsMissing
    /// A permanent failure or the last attempt (`failTransfer`, `failChecksum`, `startOver` of a
    /// transfer that started over once already).
    case failed
    /// The origin changed for the first time: start over as a new generation (`startOver`).
    case originChanged
    /// `haul cancel`.
    case cancel
    /// `haul retry` (`OperatorActions`, and `TransferStore.startOver` for a retry from scratch).
    case retry
    /// `haul pause`.
    case pause
    /// `haul resume`.
    case resume
}

/// The transfer state machine as one table: for each event, the states it may leave and the
/// states it may enter. `TransitionGuardTests` reads every `UPDATE` of `transfers.state` in
/// this module from the source and checks it against this table: the states it writes are
/// its event's "to" states, and its guard (`state IN (…)`) allows only its "from" states. A
/// few are guarded otherwise and say so there: by a lease held only in one state, or (the
/// operator actions) by locking the row and judging its state with this table first.
public enum TransferTransitions {
    /// One row of the table.
    public struct Rule: Sendable {
        /// States the event may leave.
        public let from: Set<TransferState>
        /// States the event may enter (several where the row's data decides, such as a retry
        /// resuming where the failed transfer stopped).
        public let to: Set<TransferState>
    }

    /// The whole table.
    public static let rules: [TransferEvent: Rule] = [
        .planningClaimed: Rule(from: [.pending], to: [.planning]),
        .planWritten: Rule(from: [.pending, .planning], to: [.downloading, .finalizing]),
        .probeFinished: Rule(from: [.pending, .planning, .canceled], to: [.done]),
        .planningReleased: Rule(from: [.planning], to: [.pending]),
        .lastSegmentDone: Rule(from: [.downloading], to: [.finalizing]),
        .finished: Rule(from: [.finalizing], to: [.done]),
        .partsMissing: Rule(from: [.finalizing], to: [.downloading]),
        .failed: Rule(from: [.pending, .planning, .downloading, .finalizing], to: [.failed]),
        .originChanged: Rule(from: [.planning, .downloading, .finalizing], to: [.pending]),
        .cancel: Rule(from: [.pending, .planning, .downloading, .finalizing, .paused, .failed], to: [.canceled]),
        .retry: Rule(from: [.failed, .canceled], to: [.pending, .downloading, .finalizing]),
        .pause: Rule(from: [.pending, .planning, .downloading], to: [.paused]),
        .resume: Rule(from: [.paused], to: [.pending, .downloading]),
    ]

    /// The rule of `event`.
    public static func rule(_ event: TransferEvent) -> Rule {
        guard let rule = rules[event] else { preconditionFailure("no transition rule for \(event)") }
        return rule
    }

    /// Whether `event` may happen to a transfer in `state`.
    public static func allows(_ event: TransferEvent, from state: TransferState) -> Bool {
        rule(event).from.contains(state)
    }

    /// The states a transfer in `state` may enter on `event`; empty when the event is refused.
    public static func targets(of event: TransferEvent, from state: TransferState) -> Set<TransferState> {
        allows(event, from: state) ? rule(event).to : []
    }
}

/// What happens to a segment: the events of its life, from a fetcher's claim to a retry.
/// Each names the code path that applies it.
public enum SegmentEvent: String, Sendable, CaseIterable {
    /// A fetcher leases queued segments of a downloading transfer (`SegmentLeases.claim`).
    case claimed
    /// The lease holder recorded the segment's last byte (`SegmentLeases.markDone`); a segment the
    /// rescuer queued again meanwhile still counts, as its bytes are there.
    case completed
    /// A lease handed back on shutdown, run out, or left by a get's own worker that stopped
    /// (`SegmentLeases.release`, `rescueExpired`, `TransferStore.adopt`).
    case released
    /// A fetch failed: queued again for a later attempt, or failed after the last one (`SegmentLeases.fail`).
    case fetchFailed
    /// The transfer failed, was canceled, or starts over: its unfinished segments stop
    /// (`failTransfer`, `OperatorActions` cancel, `startOver`; a failed one keeps failing with the new reason).
    case transferEnded
    /// Done segments are fetched again: their part files vanished, or a retry after a checksum
    /// mismatch (`refetch`, `OperatorActions.refetchMismatched`).
    case refetched
    /// `haul retry`: the failed segments of the current generation are queued again.
    case retried
}

/// The segment state machine as one table, in the manner of `TransferTransitions` and checked
/// against every `UPDATE` of `segments.state` by the same test: for each event, the states it
/// may leave and the states it may enter.
public enum SegmentTransitions {
    /// One row of the table.
    public struct Rule: Sendable {
        /// States the event may leave.
        public let from: Set<SegmentState>
        /// States the event may enter.
        public let to: Set<SegmentState>
    }

    /// The whole table.
    public static let rules: [SegmentEvent: Rule] = [
        .claimed: Rule(from: [.queued], to: [.running]),
        .completed: Rule(from: [.running, .queued], to: [.done]),
        .released: Rule(from: [.running], to: [.queued]),
        .fetchFailed: Rule(from: [.running], to: [.queued, .failed]),
        .transferEnded: Rule(from: [.queued, .running, .failed], to: [.failed]),
        .refetched: Rule(from: [.done], to: [.queued]),
        .retried: Rule(from: [.failed, .running], to: [.queued]),
    ]

    /// The rule of `event`.
    public static func rule(_ event: SegmentEvent) -> Rule {
        guard let rule = rules[event] else { preconditionFailure("no segment transition rule for \(event)") }
        return rule
    }
}
