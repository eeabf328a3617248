import Foundation
import HaulHTTP
import Synchronization
import Testing

/// The kept easy handles (`CurlHandles`): past its limit, a request waits for a handle, and
/// so for a connection, that another request gives back instead of opening one of its own.
@Suite("kept libcurl handles")
struct CurlHandlesTests {
    init() { Self.curl }

    private static let curl: Void = Curl.initialize()

    /// A handle's address, to compare handles across threads.
    private static func address(_ handle: UnsafeMutableRawPointer) -> Int { Int(bitPattern: handle) }

    @Test("past the limit, a request takes the handle another one gives back rather than a new one")
    func waitsForAHandleGivenBack() throws {
        let handles = CurlHandles(idleLimit: 8, patience: 60)
        handles.limit(busy: 2)
        let first = try handles.take()
        let second = try handles.take()
        let third = Mutex<Int?>(nil)
        let taken = DispatchSemaphore(value: 0)
        Thread {
            if let handle = try? handles.take() { third.withLock { $0 = Self.address(handle) } }
            taken.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.2)
        handles.give(first)
        taken.wait()
        #expect(third.withLock { $0 } == Self.address(first))
        handles.give(second)
    }

    @Test("a request that waits past its patience gets a handle of its own")
    func patienceEnds() throws {
        let handles = CurlHandles(idleLimit: 8, patience: 0.1)
        handles.limit(busy: 1)
        let first = try handles.take()
        let second = try handles.take()
        #expect(first != second)
        handles.give(first)
        handles.give(second)
    }
}
