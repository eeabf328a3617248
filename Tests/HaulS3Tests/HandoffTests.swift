import Foundation
@testable import HaulS3
import Testing

@Suite("PartStream's handoff between the fetching thread and the part upload")
struct HandoffTests {
    /// Runs `body` on a thread of its own; the returned semaphore is signalled when it ends.
    private func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done
    }

    @Test("a lent buffer is taken in pieces, in order; the writer returns once all is taken; close ends the reader")
    func piecesInOrder() {
        let handoff = Handoff()
        let received = ReceivedBytes()
        let reader = onThread {
            var buffer = [UInt8](repeating: 0, count: 3)
            while true {
                let got = buffer.withUnsafeMutableBytes { handoff.take(into: $0.baseAddress!, count: 3) }
                if got == 0 { return }
                received.append(buffer[0..<got])
            }
        }
        let chunks: [[UInt8]] = [Array(0..<10), Array(10..<11), Array(11..<40)]
        for chunk in chunks {
            let outcome = chunk.withUnsafeBytes { handoff.lend($0) { true } }
            #expect(outcome == .taken)
        }
        handoff.close()
        #expect(reader.wait(timeout: .now() + 10) == .success)
        #expect(received.bytes == Array(0..<40))
    }

    @Test("a request that ends frees a writer waiting for it to take its bytes")
    func readerEnds() {
        let handoff = Handoff()
        let ender = onThread {
            Thread.sleep(forTimeInterval: 0.1)
            handoff.readerEnded()
        }
        let outcome = [UInt8](repeating: 7, count: 100).withUnsafeBytes { handoff.lend($0) { true } }
        #expect(outcome == .readerEnded)
        _ = ender.wait(timeout: .now() + 10)
    }

    @Test("a writer told to stop while waiting takes its buffer back: the reader never reads it after")
    func writerGivesUp() {
        let handoff = Handoff()
        let calls = ReceivedBytes()
        let outcome = [UInt8](repeating: 7, count: 100).withUnsafeBytes { bytes in
            handoff.lend(bytes) {
                calls.append([1])
                return false
            }
        }
        #expect(outcome == .gaveUp)
        #expect(calls.bytes.count == 1)
        let reader = onThread {
            var byte: UInt8 = 0
            calls.append([withUnsafeMutableBytes(of: &byte) { UInt8(handoff.take(into: $0.baseAddress!, count: 1)) }])
        }
        Thread.sleep(forTimeInterval: 0.1)
        handoff.close()
        #expect(reader.wait(timeout: .now() + 10) == .success)
        #expect(calls.bytes == [1, 0])
    }
}

/// Bytes appended from several threads.
private final class ReceivedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [UInt8] = []

    func append<S: Sequence>(_ bytes: S) where S.Element == UInt8 { lock.withLock { stored.append(contentsOf: bytes) } }
    var bytes: [UInt8] { lock.withLock { stored } }
}
