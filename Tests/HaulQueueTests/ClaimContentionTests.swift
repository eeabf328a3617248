import HaulQueue
import Testing

@Suite("waits after a contended claim (ClaimContention)")
struct ClaimContentionTests {
    @Test("a claimer that met another at a host's row claims again at 10, 40, 160, 640 ms, then idles as usual")
    func contendedClaimerLooksAgainSoon() {
        let waits = (1...6).map { ClaimContention.delay(rounds: $0, pollInterval: 1) }
        #expect(waits == [0.01, 0.04, 0.16, 0.64, nil, nil])
        #expect(abs((ClaimContention.delay(rounds: 1, pollInterval: 1, jitter: 1.5) ?? 0) - 0.015) < 1e-9)
        #expect(ClaimContention.delay(rounds: 3, pollInterval: 0.1) == nil, "never longer than a poll interval")
        #expect(ClaimContention.delay(rounds: 10_000, pollInterval: 1_000_000) == nil)
    }
}
