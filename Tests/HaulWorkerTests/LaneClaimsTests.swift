import HaulQueue
import Testing

@testable import HaulWorker

/// An idle lane runs only the claims that could find what `WorkProbe` found: a batch of small
/// files (pending transfers, no segments) costs a woken lane its planning claim, not four claims.
@Suite("an idle lane's claims")
struct LaneClaimsTests {
    let everyRole = Set(Role.allCases)

    @Test("each claim runs only when there is work of its kind")
    func claimsFollowTheProbe() {
        #expect(Lane.claims(roles: everyRole, kinds: [.pendingTransfers]) == [.plan])
        #expect(Lane.claims(roles: everyRole, kinds: [.queuedSegments]) == [.fetch])
        #expect(Lane.claims(roles: everyRole, kinds: [.runningSegments]) == [.split])
        #expect(Lane.claims(roles: everyRole, kinds: [.finalizingTransfers]) == [.finalize])
        #expect(Lane.claims(roles: everyRole, kinds: []).isEmpty)
        #expect(Lane.claims(roles: everyRole, kinds: .all) == [.finalize, .fetch, .plan, .split])
    }

    @Test("a lane never runs the claim of a role it does not play")
    func claimsFollowTheRoles() {
        #expect(Lane.claims(roles: [.finalizer, .rescuer], kinds: .all) == [.finalize])
        #expect(Lane.claims(roles: [.fetcher], kinds: .all) == [.fetch, .split])
        #expect(Lane.claims(roles: [.planner], kinds: [.queuedSegments, .finalizingTransfers]).isEmpty)
    }
}
