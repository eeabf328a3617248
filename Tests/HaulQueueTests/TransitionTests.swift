import HaulCore
import HaulQueue
import Testing

@Suite("transfer transitions")
struct TransitionTests {
    @Test("every event has a rule, and no event leaves a final state except retry, cancel of a failed transfer, and a small file canceled too late")
    func finalStatesStayFinal() {
        for event in TransferEvent.allCases {
            let rule = TransferTransitions.rule(event)
            #expect(!rule.from.isEmpty && !rule.to.isEmpty, "\(event)")
            let leavesFinal = rule.from.filter(\.isFinal)
            switch event {
            case .retry: #expect(leavesFinal == [.failed, .canceled])
            case .cancel: #expect(leavesFinal == [.failed])
            // A small file published by its batch just before the cancel arrived: kept, recorded done.
            case .probeFinished: #expect(leavesFinal == [.canceled])
            default: #expect(leavesFinal.isEmpty, "\(event) leaves \(leavesFinal)")
            }
        }
    }

    @Test("every state can be reached and every non-final state can be left")
    func connected() {
        let reached = Set(TransferTransitions.rules.values.flatMap(\.to)).union([.pending])
        #expect(reached == Set(TransferState.allCases))
        let left = Set(TransferTransitions.rules.values.flatMap(\.from))
        for state in TransferState.allCases where !state.isFinal { #expect(left.contains(state), "\(state)") }
    }

    @Test("each action is allowed from exactly its states")
    func table() {
        let expected: [OperatorAction: Set<TransferState>] = [
            .cancel: [.pending, .planning, .downloading, .finalizing, .paused, .failed],
            .retry: [.failed, .canceled],
            .pause: [.pending, .planning, .downloading],
            .resume: [.paused],
        ]
        for (action, allowed) in expected {
            for state in TransferState.allCases {
                let refusal = action.refusal(transfer: 7, state: state)
                #expect((refusal == nil) == allowed.contains(state), "\(action) from \(state)")
                if let refusal {
                    #expect(refusal.code == .invalidTransition && refusal.message.contains("transfer 7 is \(state.rawValue)"))
                }
            }
        }
    }

    @Test("pausing a paused transfer changes nothing and is not an error; other refusals stay refusals")
    func idempotentPause() {
        #expect(OperatorAction.pause.verdict(transfer: 7, state: .paused) == .alreadyDone)
        #expect(OperatorAction.pause.verdict(transfer: 7, state: .downloading) == .apply)
        if case .refuse(let error) = OperatorAction.cancel.verdict(transfer: 7, state: .canceled) {
            #expect(error.code == .invalidTransition)
        } else {
            Issue.record("canceling a canceled transfer is refused")
        }
    }

    @Test("operator actions are the table's rows, and refusals come exactly from it")
    func operatorActions() {
        for action in [OperatorAction.cancel, .retry, .pause, .resume] {
            for state in TransferState.allCases {
                let allowed = TransferTransitions.allows(action.event, from: state)
                #expect((action.refusal(transfer: 1, state: state) == nil) == allowed, "\(action) from \(state)")
                if !allowed { #expect(action.refusal(transfer: 1, state: state)?.code == .invalidTransition) }
            }
        }
    }
}
