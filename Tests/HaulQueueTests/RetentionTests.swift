import HaulQueue
import Testing

@Suite("retention")
struct RetentionTests {
    @Test("pruning runs every quarter of the retention, between 10 s and 10 minutes")
    func pruneInterval() {
        #expect(Retention.pruneInterval(retention: 7 * 86_400) == 600)
        #expect(Retention.pruneInterval(retention: 3600) == 600)
        #expect(Retention.pruneInterval(retention: 600) == 150)
        #expect(Retention.pruneInterval(retention: 60) == 15)
        #expect(Retention.pruneInterval(retention: 1) == 10)
    }
}
