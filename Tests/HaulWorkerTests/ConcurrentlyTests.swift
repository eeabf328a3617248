import Foundation
import HaulCore
import Synchronization
import Testing

@testable import HaulWorker

/// `Concurrently.map`: blocking calls side by side, results in order.
struct ConcurrentlyTests {
    /// Counts the calls in flight at once, and the most seen.
    final class InFlight: Sendable {
        let now = Atomic<Int>(0)
        let most = Atomic<Int>(0)

        func enter() {
            let count = now.add(1, ordering: .sequentiallyConsistent).newValue
            var seen = most.load(ordering: .sequentiallyConsistent)
            while count > seen {
                let (exchanged, current) = most.compareExchange(expected: seen, desired: count, ordering: .sequentiallyConsistent)
                if exchanged { break }
                seen = current
            }
        }

        func leave() { now.subtract(1, ordering: .sequentiallyConsistent) }
    }

    @Test("every index once, the results in order, several calls at once but never more than the width")
    func mapsInOrderSideBySide() {
        let inFlight = InFlight()
        let results = Concurrently.map(64, width: 8) { index in
            inFlight.enter()
            usleep(2_000)  // a round trip: the others start meanwhile
            inFlight.leave()
            return index * index
        }
        #expect(results == (0..<64).map { $0 * $0 })
        let most = inFlight.most.load(ordering: .sequentiallyConsistent)
        #expect(most > 1 && most <= 8, "\(most) at once")
    }

    @Test("nothing, one item, and a width of one run on the calling thread")
    func smallCases() {
        #expect(Concurrently.map(0, width: 8) { $0 }.isEmpty)
        #expect(Concurrently.map(1, width: 8) { $0 + 1 } == [1])
        #expect(Concurrently.map(3, width: 1) { $0 * 2 } == [0, 2, 4])
    }
}
