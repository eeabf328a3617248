import Testing

@testable import HaulWorker

/// `FairShare.step`: when a lane streaming a long segment asks, and yields, to waiting work.
struct FairShareTests {
    let rule = FairShare(budget: 1)

    @Test("a segment held under the budget streams on without asking")
    func underBudget() {
        #expect(rule.step(held: 0.5, rate: 1000, rest: 1 << 30, othersWait: nil, sinceWorkerYield: .infinity) == .keep)
        #expect(rule.step(held: 0.5, rate: 1000, rest: 1 << 30, othersWait: true, sinceWorkerYield: .infinity) == .keep)
    }

    @Test("past the budget it asks; it yields only when others wait")
    func pastBudget() {
        #expect(rule.step(held: 2, rate: 4_194_304, rest: 400 << 20, othersWait: nil, sinceWorkerYield: .infinity) == .ask)
        #expect(rule.step(held: 2, rate: 4_194_304, rest: 400 << 20, othersWait: true, sinceWorkerYield: .infinity) == .yield)
        #expect(rule.step(held: 2, rate: 4_194_304, rest: 400 << 20, othersWait: false, sinceWorkerYield: .infinity) == .keep)
    }

    @Test("a trickling segment yields too: its rest is far from done")
    func trickler() {
        #expect(rule.step(held: 5, rate: 3, rest: 256 << 10, othersWait: true, sinceWorkerYield: .infinity) == .yield)
    }

    @Test("a segment that finishes within the budget anyway keeps its lane")
    func nearlyDone() {
        #expect(rule.step(held: 3, rate: 4_194_304, rest: 3 << 20, othersWait: true, sinceWorkerYield: .infinity) == .keep)
        #expect(rule.step(held: 3, rate: 4_194_304, rest: 0, othersWait: nil, sinceWorkerYield: .infinity) == .keep)
    }

    @Test("a body of unknown length never yields: its rest cannot be resumed by range")
    func unknownLength() {
        #expect(rule.step(held: 9, rate: 1000, rest: nil, othersWait: true, sinceWorkerYield: .infinity) == .keep)
    }

    @Test("one lane of a worker yields per budget: the next waits its turn")
    func oneLanePerBudget() {
        #expect(rule.step(held: 9, rate: 1000, rest: 1 << 30, othersWait: true, sinceWorkerYield: 0.4) == .keep)
        let turns = YieldTurns()
        #expect(turns.take(now: 100, budget: 1))
        #expect(!turns.take(now: 100.5, budget: 1), "a second lane within the budget waits")
        #expect(turns.sinceLast(now: 100.5) == 0.5)
        #expect(turns.take(now: 101.2, budget: 1))
    }
}
