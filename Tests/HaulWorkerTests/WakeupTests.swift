import Foundation
import HaulStorage
import Testing

@testable import HaulWorker

/// A missed wake-up sleeps for an hour: the time limits catch that. They are ten minutes, not
/// one, because a limit counts from the test's start and, with the suite's blocking integration
/// tests holding both threads of a 2-core machine's pool, these waited over a minute to run.
@Suite("wake-ups: a settled transfer or a stop is never missed")
struct WakeupTests {
    @Test("a transfer settled between reading the states and waiting ends the wait at once", .timeLimit(.minutes(10)))
    func settledBeforeTheWait() {
        let progress = ProgressCounter()
        let mark = progress.settledMark()
        // The worker settles the transfer while `haul get` still reads its state.
        progress.announceSettled()
        // With the wake-up missed, this would sleep for the whole hour (and hit the time limit).
        progress.waitForSettled(since: mark, timeout: 3600)
        #expect(progress.settledMark() != mark)
    }

    @Test("a stop asked for while a role thread is mid-step ends its next wait and pause at once", .timeLimit(.minutes(10)))
    func stopDuringAStep() throws {
        try Self.withIdleWorker { shared in
            // The thread takes its mark, then runs a step; `haul get` stops the worker meanwhile.
            let mark = shared.wakeup.mark()
            shared.requestStop()
            // Either wait would last the hour if the stop given during the step were missed.
            shared.wakeup.wait(since: mark, timeout: shared.config.pollInterval)
            shared.pause(3600, since: mark)
            #expect(shared.isStopping())
        }
    }

    @Test("work for one lane wakes a lane, never a thread pausing between housekeeping rounds", .timeLimit(.minutes(10)))
    func workForOneReachesALane() throws {
        try Self.withIdleWorker { shared in
            // The housekeeper pauses between rounds on the same wake-ups as the lanes, and waits
            // first here: the one thread a plain signal woke, which then took the lane's wake-up.
            let paused = DispatchSemaphore(value: 0)
            Thread {
                shared.pause(3600, since: shared.wakeup.mark())
                paused.signal()
            }.start()
            Thread.sleep(forTimeInterval: 0.3)
            // An idle lane waits; a batch gives its host slots back and announces work for one.
            let mark = shared.wakeup.mark()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { shared.announceWorkForOne() }
            // With the wake-up taken by the pause, this would sleep for the hour.
            shared.wakeup.wait(since: mark, timeout: shared.config.pollInterval)
            #expect(!shared.isStopping(), "the lane woke for work, not for a stop")
            shared.requestStop()
            paused.wait()
        }
    }

    /// Runs `body` with a worker's shared state that polls once an hour and reaches no database
    /// (nothing here runs a query), on a storage folder removed afterwards.
    private static func withIdleWorker(_ body: (WorkerShared) throws -> Void) throws {
        let folder = NSTemporaryDirectory() + "haul-wakeup-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var config = WorkerConfig(conninfo: "host=/nonexistent", storage: try StorageRoot(folder))
        config.pollInterval = 3600
        try body(WorkerShared(config: config, progress: ProgressCounter()))
    }

    @Test("a stop signal makes its descriptor readable for every poller")
    func stopSignalIsReadable() {
        let stop = StopSignal()
        #expect(stop.descriptor >= 0)
        var before = [pollfd(fd: stop.descriptor, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&before, 1, 0) == 0)
        stop.fire()
        stop.fire()
        for _ in 0..<2 {
            var after = [pollfd(fd: stop.descriptor, events: Int16(POLLIN), revents: 0)]
            #expect(poll(&after, 1, 60_000) == 1)
        }
    }
}
