import HaulCore
import Testing

@testable import HaulWorker

/// A mirror's attempt is a crawl only after the window, and only well under its peers' rate.
@Suite("mirror crawl")
struct MirrorCrawlTests {
    static let rule = MirrorCrawl(peerRate: 10_000_000, window: 30)

    @Test("an attempt under a tenth of the peers' rate is too slow once the window is over")
    func crawl() {
        #expect(throws: HaulError.self) { try Self.rule.judge(received: 29_000_000, seconds: 30, host: "m.example") }
        do {
            try Self.rule.judge(received: 29_000_000, seconds: 30, host: "m.example")
        } catch let error as HaulError {
            #expect(error.code == .tooSlow && error.isTransient && error.message.contains("m.example"))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("before the window, or at a tenth of the peers' rate or more, the attempt goes on")
    func noCrawl() throws {
        try Self.rule.judge(received: 1, seconds: 29.9, host: "m.example")
        try Self.rule.judge(received: 30_000_000, seconds: 30, host: "m.example")
    }
}
