import Foundation
import Testing

@testable import HaulWorker

/// The housekeeper's jobs as services: their configs, their schedule, and one round of a job.
@Suite("maintenance services")
struct MaintenanceTests {
    /// A service that counts its rounds, and fails them when told.
    final class Counting: MaintenanceService {
        let name: String
        let interval: Double
        let runsAtStart: Bool
        var rounds = 0
        var fails = false

        init(_ name: String, every interval: Double, atStart: Bool = true) {
            self.name = name
            self.interval = interval
            runsAtStart = atStart
        }

        func runOnce() throws {
            rounds += 1
            if fails { throw TestFailure("\(name) failed") }
        }
    }

    struct TestFailure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    @Test("each service runs when its interval has passed: at every round, every few seconds, or first after one interval")
    func schedule() throws {
        let start = Date(timeIntervalSince1970: 1_000_000)
        let everyRound = Counting("every round", every: 0)
        let heartbeat = Counting("heartbeat", every: 5)
        let pruner = Counting("pruner", every: 600, atStart: false)
        let scheduler = MaintenanceScheduler([everyRound, heartbeat, pruner], start: start)
        for second in stride(from: 0.0, through: 600, by: 1) {
            try scheduler.runDue(at: start.addingTimeInterval(second))
        }
        #expect(everyRound.rounds == 601)
        #expect(heartbeat.rounds == 121)
        #expect(pruner.rounds == 1)
    }

    @Test("a failing service ends the round, and waits its interval like one that succeeded")
    func failure() {
        let start = Date(timeIntervalSince1970: 1_000_000)
        let failing = Counting("failing", every: 10)
        failing.fails = true
        let after = Counting("after", every: 0)
        let scheduler = MaintenanceScheduler([failing, after], start: start)
        #expect(throws: TestFailure.self) { try scheduler.runDue(at: start) }
        #expect(failing.rounds == 1 && after.rounds == 0)
        #expect(throws: Never.self) { try scheduler.runDue(at: start.addingTimeInterval(1)) }
        #expect(failing.rounds == 1 && after.rounds == 1)
        #expect(scheduler.due(at: start.addingTimeInterval(10)).map(\.name) == ["failing", "after"])
    }

    @Test("HAUL_RETENTION: 7 days by default, a duration, off; anything else turns pruning off and says so")
    func retentionConfig() {
        #expect(RetentionPruner.Config(environment: [:]).retention == Double(7 * 86_400))
        #expect(RetentionPruner.Config(environment: ["HAUL_RETENTION": "12h"]).retention == 43_200)
        let off = RetentionPruner.Config(environment: ["HAUL_RETENTION": "off"])
        #expect(off.retention == nil && off.problems.isEmpty)
        let wrong = RetentionPruner.Config(environment: ["HAUL_RETENTION": "soon"])
        #expect(
            wrong.retention == nil && wrong.problems == ["HAUL_RETENTION=soon is neither a duration (such as 7d) nor off; finished transfers are not pruned"])
    }

    @Test("HAUL_S3_ORPHAN_CHECK and HAUL_S3_ORPHAN_GRACE: 10 minutes and 1 hour by default; a value that is no duration keeps the default and says so")
    func orphanConfig() {
        let defaults = OrphanUploadSweeper.Config(environment: [:])
        #expect(defaults.every == 600 && defaults.grace == 3600 && defaults.problems.isEmpty)
        let set = OrphanUploadSweeper.Config(environment: ["HAUL_S3_ORPHAN_CHECK": "1s", "HAUL_S3_ORPHAN_GRACE": "2m"])
        #expect(set.every == 1 && set.grace == 120)
        let wrong = OrphanUploadSweeper.Config(environment: ["HAUL_S3_ORPHAN_CHECK": "often"])
        #expect(wrong.every == 600 && wrong.problems == ["HAUL_S3_ORPHAN_CHECK=often is not a duration (such as 10m or 1h); using 600 s"])
    }
}
