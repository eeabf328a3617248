import HaulHTTP
import Testing

/// `LowestSpeed.forTransfer`: a transfer's own figures over its worker's.
struct LowestSpeedRuleTests {
    let worker = LowestSpeed(bytesPerSecond: 4096, seconds: 60)

    @Test("a transfer without figures of its own takes its worker's rule, or none")
    func workerRule() {
        #expect(LowestSpeed.forTransfer(worker: worker, bytesPerSecond: nil, seconds: nil) == worker)
        #expect(LowestSpeed.forTransfer(worker: nil, bytesPerSecond: nil, seconds: nil) == nil)
    }

    @Test("its own figures win, the other one is its worker's")
    func ownFigures() {
        #expect(LowestSpeed.forTransfer(worker: worker, bytesPerSecond: 100, seconds: nil) == LowestSpeed(bytesPerSecond: 100, seconds: 60))
        #expect(LowestSpeed.forTransfer(worker: worker, bytesPerSecond: nil, seconds: 5) == LowestSpeed(bytesPerSecond: 4096, seconds: 5))
    }

    @Test("0 turns the rule off for the transfer; a worker without one lends the standard figures")
    func offAndStandard() {
        #expect(LowestSpeed.forTransfer(worker: worker, bytesPerSecond: 0, seconds: nil) == nil)
        #expect(LowestSpeed.forTransfer(worker: nil, bytesPerSecond: nil, seconds: 2) == LowestSpeed(bytesPerSecond: 1024, seconds: 2))
    }
}
