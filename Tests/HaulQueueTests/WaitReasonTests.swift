import HaulQueue
import Testing

@Suite("Why a transfer waits (WaitReason.decide)")
struct WaitReasonTests {
    typealias Facts = WaitReason.Facts

    @Test("finished, running and in-between transfers do not wait")
    func notWaiting() {
        for state in [TransferState.done, .failed, .canceled, .planning, .finalizing] {
            #expect(WaitReason.decide(Facts(state: state, hostLimit: 0, noLiveWorker: "none")) == nil, "\(state)")
        }
        #expect(WaitReason.decide(Facts(state: .downloading, running: 2, hostRunning: 8, hostLimit: 8)) == nil)
        #expect(WaitReason.decide(Facts(state: .downloading, due: false)) == nil, "nothing queued, nothing backing off")
    }

    @Test("a paused transfer waits for resume, whatever else holds")
    func transferPaused() {
        let reason = WaitReason.decide(Facts(id: 42, state: .paused, hostLimit: 0, noLiveWorker: "none"))
        #expect(reason == .transferPaused(id: 42))
        #expect(reason?.text == "waits: it is paused; 'haul resume 42' lets it run")
    }

    @Test("a paused origin comes before everything but a paused transfer")
    func originPaused() {
        let reason = WaitReason.decide(Facts(state: .pending, due: false, backoffUntil: "t", host: "a.test:80", hostLimit: 0, noLiveWorker: "none"))
        #expect(reason == .originPaused(host: "a.test:80"))
        #expect(reason?.text.contains("its origin a.test:80 is paused") == true)
    }

    @Test("no live worker comes before backoff and limits")
    func noLiveWorker() {
        let reason = WaitReason.decide(
            Facts(state: .downloading, due: false, backoffUntil: "t", hostRunning: 8, noLiveWorker: "no worker has been seen for 2 min"))
        #expect(reason == .noLiveWorker(warning: "no worker has been seen for 2 min"))
        #expect(reason?.text == "waits: no worker has been seen for 2 min")
        // The last worker stopped moments ago: no warning from the registry yet, and no lane either.
        let stopped = WaitReason.decide(Facts(state: .pending, liveWorkers: 0))
        #expect(stopped == .noLiveWorker(warning: WaitReason.noWorkerRunning))
        #expect(stopped?.text == "waits: no worker is running against this database now; start one with 'haul worker --storage DIR'")
    }

    @Test("work that is not due backs off until its retry time, with the error")
    func backingOff() {
        let reason = WaitReason.decide(
            Facts(state: .downloading, due: false, backoffUntil: "2026-12-06 01:02:03 UTC", backoffReason: "origin answered 503", hostRunning: 8))
        #expect(reason == .backingOff(until: "2026-12-06 01:02:03 UTC", reason: "origin answered 503"))
        #expect(reason?.text == "waits: backing off until 2026-12-06 01:02:03 UTC after: origin answered 503")
        #expect(WaitReason.decide(Facts(state: .pending, due: false, backoffUntil: "T"))?.text == "waits: backing off until T")
    }

    @Test("due work of a host at its limit waits for the host's slots")
    func hostLimit() {
        let reason = WaitReason.decide(Facts(state: .pending, host: "slow.test:80", hostRunning: 1, hostLimit: 1))
        #expect(reason == .hostLimit(host: "slow.test:80", running: 1, limit: 1))
        #expect(reason?.text == "waits: its origin slow.test:80 is at its limit (1/1 running); 'haul host-limit set slow.test:80 N' raises it")
    }

    @Test("due work with room on its host waits for a lane")
    func lanesBusy() {
        let reason = WaitReason.decide(Facts(state: .downloading, hostRunning: 3, hostLimit: 8, liveWorkers: 2, fleetRunning: 16))
        #expect(reason == .lanesBusy(running: 16, workers: 2))
        #expect(reason?.text == "waits: all lanes are busy (16 segments running on 2 workers)")
        #expect(WaitReason.decide(Facts(state: .pending, fleetRunning: 8))?.text == "waits: all lanes are busy (8 segments running on 1 worker)")
    }

    @Test("each reason has its own stable name for scripts, and its text is `waits: ` and its detail")
    func codes() {
        let reasons: [(WaitReason, String)] = [
            (.transferPaused(id: 1), "paused"), (.originPaused(host: "h"), "origin-paused"), (.noLiveWorker(warning: "w"), "no-live-worker"),
            (.backingOff(until: "t", reason: nil), "backing-off"), (.hostLimit(host: "h", running: 1, limit: 1), "host-limit"),
            (.lanesBusy(running: 1, workers: 1), "lanes-busy"),
        ]
        for (reason, code) in reasons {
            #expect(reason.code == code)
            #expect(reason.text == "waits: " + reason.detail)
            #expect(!reason.detail.hasPrefix("waits"), "the status line says `waiting:` before it")
        }
    }
}
