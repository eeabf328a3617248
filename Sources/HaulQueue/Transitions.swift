/// What happens to a transfer: the events of its life, from the planner's claim to an
/// operator's retry. Each names the code path that applies it.
public enum TransferEvent: String, Sendable, CaseIterable {
    /// A planner leases a pending transfer (`TransferLeases.claimPlanning`).
    case planningClaimed
    /// The planner wrote the plan: segments queued, or no segment at all for an empty file (`writePlan`).
    case planWritten
    /// The probe itself finished the file, or the origin answered `304` (`finish(probed:)`, `finishUnchanged`).
    case probeFinished
    /// A planning lease was handed back on shutdown or ran out (`release`, `rescueExpired`, `postpone`).
    case planningReleased
    /// The last segment completed (`SegmentLeases.complete`, or the rescuer after an outage).
    case lastSegmentDone
    /// The finalizer published the verified file and did what was asked after (`finish`).
    case finished
    /// Part files vanished before assembly: their segments go back to the fetchers (`requeueMissingParts`).
    case partsMissing
    /// A permanent failure or the last attempt (`failTransfer`, `failChecksum`, `postpone`).
    case failed
    /// The origin changed for the first time: start over as a new generation (`restartOrFail`).
    case originChanged
    /// `haul cancel`.
    case cancel
    /// `haul retry`.
    case retry
    /// `haul pause`.
    case pause
    /// `haul resume`.
    case resume
}

/// The transfer state machine as one table: for each event, the states it may leave and the
/// states it may enter. Every `UPDATE` of `transfers.state` in this module is guarded by the
/// "from" states of its event, so two actors can never both win; the queue tests check each
/// guard against this table.
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
        .planWritten: Rule(from: [.planning], to: [.downloading, .finalizing]),
        .probeFinished: Rule(from: [.planning], to: [.done]),
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
