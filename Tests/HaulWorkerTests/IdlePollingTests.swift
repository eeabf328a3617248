import Testing

@testable import HaulWorker

@Suite("idle polling")
struct IdlePollingTests {
    @Test("the poller looks every poll interval at first, then doubles its sleep up to four intervals")
    func pollerBacksOff() {
        let sleeps = (1...8).map { IdlePolling.delay(idleRounds: $0, pollInterval: 1, poller: true) }
        #expect(sleeps == [1, 2, 4, 4, 4, 4, 4, 4])
        #expect(IdlePolling.delay(idleRounds: 1, pollInterval: 0.2, poller: true) == 0.2)
        #expect(IdlePolling.delay(idleRounds: 10_000, pollInterval: 0.2, poller: true) == 0.8)
    }

    @Test("the other lanes only look on their own as a backstop: every 30 poll intervals, 30 s at least")
    func othersWaitToBeWoken() {
        #expect(IdlePolling.delay(idleRounds: 1, pollInterval: 1, poller: false) == 30)
        #expect(IdlePolling.delay(idleRounds: 1, pollInterval: 0.2, poller: false) == 30)
        #expect(IdlePolling.delay(idleRounds: 3, pollInterval: 5, poller: false) == 150)
    }
}
