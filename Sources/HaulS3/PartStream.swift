import Foundation
import HaulCore
import Synchronization

/// Streams bytes handed over by one thread into an `UploadPart` request that runs on its own
/// thread. `write` lends its buffer to the request, which copies it straight into libcurl's upload
/// buffer, and returns once every byte was taken: one copy in memory and no system call per chunk
/// (a socket pair between the threads cost two kernel copies more), memory bounded by libcurl's
/// buffers whatever the part size, nothing spooled to disk.
public final class PartStream: @unchecked Sendable {
    private let handoff = Handoff()
    private let feed: ByteFeed
    private let result = Mutex<Result<String, HaulError>?>(nil)
    private let finished = DispatchSemaphore(value: 0)
    /// Bytes handed to `write` so far.
    public private(set) var bytesWritten: Int64 = 0

    /// Starts part `number` of `uploadID` for `key`, of exactly `length` bytes.
    public init(client: S3Client, bucket: String, key: String, uploadID: String, number: Int, length: Int64) throws {
        feed = ByteFeed { [handoff] buffer, count in handoff.take(into: buffer, count: count) }
        let thread = Thread { [self, feed, handoff] in
            let outcome: Result<String, HaulError>
            do {
                outcome = .success(try client.uploadPart(bucket: bucket, key: key, uploadID: uploadID, number: number, length: length, feed: feed))
            } catch let error as HaulError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(HaulError(.`internal`, "\(error)", transient: true))
            }
            result.withLock { $0 = outcome }
            // A writer waiting for the request to take its bytes stops waiting at once.
            handoff.readerEnded()
            finished.signal()
        }
        thread.name = "s3-part"
        thread.start()
    }

    /// Sends bytes to the request, blocking while it is behind; every quarter second of waiting
    /// it calls `whileWaiting`, and gives up (`interrupted`) when that returns false. Throws the
    /// request's error if it ended.
    public func write(_ bytes: UnsafeRawBufferPointer, whileWaiting: () -> Bool) throws {
        guard !bytes.isEmpty else { return }
        switch handoff.lend(bytes, whileWaiting: whileWaiting) {
        case .taken:
            bytesWritten += Int64(bytes.count)
        case .gaveUp:
            throw HaulError(.interrupted, "the part upload was stopped", transient: true)
        case .readerEnded:
            finished.wait()
            finished.signal()
            throw outcomeError() ?? HaulError(.s3, "the part upload ended early", transient: true)
        }
    }

    /// Ends the body and waits for S3's answer, calling `whileWaiting` every quarter second
    /// (to keep a lease alive). - Returns: the part's ETag.
    public func finish(whileWaiting: () -> Void) throws -> String {
        handoff.close()
        while finished.wait(timeout: .now() + 0.25) == .timedOut { whileWaiting() }
        finished.signal()
        switch result.withLock({ $0 }) {
        case .success(let etag): return etag
        case .failure(let error): throw error
        case nil: throw HaulError(.`internal`, "a part upload ended without an outcome", transient: true)
        }
    }

    /// Stops the request without completing the part, and waits for its thread.
    public func abort() {
        feed.cancel()
        handoff.close()
        finished.wait()
        finished.signal()
    }

    private func outcomeError() -> HaulError? {
        if case .failure(let error) = result.withLock({ $0 }) { return error }
        return nil
    }
}

/// One buffer at a time, lent by a writer thread to a reader thread that copies out of it.
final class Handoff: @unchecked Sendable {
    enum Outcome { case taken, gaveUp, readerEnded }

    private let condition = NSCondition()
    private var lent: UnsafeRawBufferPointer?
    private var taken = 0
    /// The writer has nothing more to lend: the reader's next wait ends with 0 bytes.
    private var closed = false
    private var readerGone = false

    /// Lends `bytes` until the reader has taken all of them (or ended); every quarter second of
    /// waiting calls `whileWaiting` (unlocked), and takes the buffer back when it returns false.
    func lend(_ bytes: UnsafeRawBufferPointer, whileWaiting: () -> Bool) -> Outcome {
        condition.lock()
        defer {
            lent = nil
            condition.unlock()
        }
        lent = bytes
        taken = 0
        condition.broadcast()
        while !readerGone && taken < bytes.count {
            guard !condition.wait(until: Date(timeIntervalSinceNow: 0.25)) else { continue }
            condition.unlock()
            let goOn = whileWaiting()
            condition.lock()
            if !goOn && !readerGone && taken < bytes.count { return .gaveUp }
        }
        return taken == bytes.count ? .taken : .readerEnded
    }

    /// Copies up to `count` lent bytes into `buffer`, waiting for a lend. - Returns: how many;
    /// 0 once the writer closed.
    func take(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let lent, taken < lent.count {
                let got = min(count, lent.count - taken)
                buffer.copyMemory(from: lent.baseAddress! + taken, byteCount: got)
                taken += got
                if taken == lent.count { condition.broadcast() }
                return got
            }
            if closed { return 0 }
            condition.wait()
        }
    }

    /// No more bytes will be lent.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// The reader will take nothing more.
    func readerEnded() {
        condition.lock()
        readerGone = true
        condition.broadcast()
        condition.unlock()
    }
}
