import HaulCore

/// Where a transfer is in its life. Stored as text in `transfers.state`.
public enum TransferState: String, Sendable, CaseIterable, Codable {
    case pending, planning, downloading, finalizing, done, failed, canceled, paused

    /// Whether nothing more will happen to the transfer without an operator.
    public var isFinal: Bool { self == .done || self == .failed || self == .canceled }

    /// `counts` keyed by state name, every state present (0 when missing): the `states`
    /// object of the JSON that `status --batch`, `batches` and the dashboard print.
    public static func named(_ counts: [TransferState: Int]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, counts[$0] ?? 0) })
    }
}

/// Where a segment is. Stored as text in `segments.state`.
public enum SegmentState: String, Sendable, CaseIterable {
    case queued, running, done, failed
}

/// What an operator asks of a transfer from the admin CLI.
public enum OperatorAction: String, Sendable {
    case cancel, retry, pause, resume

    /// The event of the transition table this action is.
    public var event: TransferEvent {
        switch self {
        case .cancel: return .cancel
        case .retry: return .retry
        case .pause: return .pause
        case .resume: return .resume
        }
    }

    /// The states this action may leave (`TransferTransitions`).
    ///
    /// Pure, so the CLI can explain a refusal before touching the database; the UPDATE
    /// repeats the guard so a race with a worker cannot slip through.
    public var allowedFrom: Set<TransferState> { TransferTransitions.rule(event).from }

    /// What the action does to a transfer in `state`.
    public enum Verdict: Sendable, Equatable {
        /// Change it.
        case apply
        /// It is already where the action leads (pausing a paused transfer): succeed, change nothing.
        case alreadyDone
        /// Its state does not allow the action.
        case refuse(HaulError)
    }

    /// Judges the action on a transfer in `state`. Pure; the caller locks the row first.
    public func verdict(transfer id: Int64, state: TransferState) -> Verdict {
        if self == .pause && state == .paused { return .alreadyDone }
        return refusal(transfer: id, state: state).map(Verdict.refuse) ?? .apply
    }

    /// The error for a transfer in `state`, or `nil` when the action is allowed.
    public func refusal(transfer id: Int64, state: TransferState) -> HaulError? {
        guard !allowedFrom.contains(state) else { return nil }
        let allowed = allowedFrom.map(\.rawValue).sorted().joined(separator: ", ")
        var hint = "it can \(rawValue) only a transfer that is \(allowed)"
        if self == .retry && state == .done { hint = "it is already done; enqueue it again to download a fresh copy" }
        if self == .resume && state != .paused { hint = "only a paused transfer can be resumed" }
        return HaulError(.invalidTransition, "transfer \(id) is \(state.rawValue), so it cannot be \(pastTense)", hint: hint)
    }

    /// `canceled`, `retried`, `paused`, `resumed`.
    public var pastTense: String {
        switch self {
        case .cancel: return "canceled"
        case .retry: return "retried"
        case .pause: return "paused"
        case .resume: return "resumed"
        }
    }
}
