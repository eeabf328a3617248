import Foundation
import Testing

@testable import HaulWorker

@Suite("progress: the bytes of the transfers haul get watches, and only those")
struct ProgressCounterTests {
    @Test("chunks added from many lanes at once are all counted; an unwatched transfer has no tally")
    func concurrentChunks() {
        let progress = ProgressCounter(watching: [7, 9])
        #expect(progress.tally(for: 8) == nil)
        #expect(progress.bytes(for: 8) == 0)
        DispatchQueue.concurrentPerform(iterations: 8) { lane in
            let tally = progress.tally(for: lane.isMultiple(of: 2) ? 7 : 9)
            for _ in 0..<10_000 { tally?.add(3) }
        }
        #expect(progress.bytes(for: 7) == 4 * 10_000 * 3)
        #expect(progress.bytes(for: 9) == 4 * 10_000 * 3)
    }
}
