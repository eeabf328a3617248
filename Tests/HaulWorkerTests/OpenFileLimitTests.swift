import Foundation
import Testing

@testable import HaulWorker

@Suite("open files: a batch holds its files open until it publishes them")
struct OpenFileLimitTests {
    @Test("batches fit three quarters of the open-file limit across the lanes, and never shrink below 16 files")
    func batchLimit() {
        #expect(OpenFileLimit.batchLimit(requested: 1024, lanes: 4, openFiles: 20000) == 1024)
        #expect(OpenFileLimit.batchLimit(requested: 1024, lanes: 4, openFiles: 8192) == 768)
        #expect(OpenFileLimit.batchLimit(requested: 1024, lanes: 4, openFiles: 1024) == 96)
        #expect(OpenFileLimit.batchLimit(requested: 1024, lanes: 64, openFiles: 1024) == 16)
        #expect(OpenFileLimit.batchLimit(requested: 100, lanes: 0, openFiles: 1024) == 100)
    }

    @Test("the soft limit is raised to the hard one")
    func raised() {
        var limit = rlimit()
        let now = OpenFileLimit.raise()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        #expect(now == Int(clamping: limit.rlim_cur) && limit.rlim_cur == min(limit.rlim_max, 1 << 20))
    }
}
