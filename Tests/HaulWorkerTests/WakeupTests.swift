import Foundation
import Testing

@testable import HaulWorker

@Suite("wake-ups: a settled transfer or a stop is never missed")
struct WakeupTests {
    @Test("a transfer settled between reading the states and waiting ends the wait at once", .timeLimit(.minutes(1)))
    func settledBeforeTheWait() {
        let progress = ProgressCounter()
        let mark = progress.settledMark()
        // The worker settles the transfer while `haul get` still reads its state.
        progress.announceSettled()
        // With the wake-up missed, this would sleep for the whole hour (and hit the time limit).
        progress.waitForSettled(since: mark, timeout: 3600)
        #expect(progress.settledMark() != mark)
    }

    @Test("a stop signal makes its descriptor readable for every poller", .timeLimit(.minutes(1)))
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
