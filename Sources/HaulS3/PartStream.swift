import Foundation
import HaulCore
import Synchronization

/// Streams bytes handed over by one thread into an `UploadPart` request that runs on its own
/// thread, through a socket pair: the writer blocks while the socket's buffer is full, so memory
/// stays at a few hundred KiB whatever the part size, and nothing is spooled to disk.
public final class PartStream: @unchecked Sendable {
    private let writeEnd: Int32
    private let readEnd: Int32
    private let feed: ByteFeed
    private let result = Mutex<Result<String, HaulError>?>(nil)
    private let finished = DispatchSemaphore(value: 0)
    private var closed = false
    /// Bytes handed to `write` so far.
    public private(set) var bytesWritten: Int64 = 0

    /// Starts part `number` of `uploadID` for `key`, of exactly `length` bytes.
    public init(client: S3Client, bucket: String, key: String, uploadID: String, number: Int, length: Int64) throws {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw HaulError(.`internal`, "cannot create a socket pair: \(String(cString: strerror(errno)))", transient: true)
        }
        writeEnd = fds[0]
        readEnd = fds[1]
        // The writer waits in poll(2), so that it can keep its lease alive while S3 is behind.
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
        feed = ByteFeed(fd: readEnd)
        let thread = Thread { [self, feed, readEnd] in
            let outcome: Result<String, HaulError>
            do {
                outcome = .success(try client.uploadPart(bucket: bucket, key: key, uploadID: uploadID, number: number, length: length, feed: feed))
            } catch let error as HaulError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(HaulError(.`internal`, "\(error)", transient: true))
            }
            result.withLock { $0 = outcome }
            // Closing our end makes a writer blocked on a full socket fail at once.
            shutdown(readEnd, Int32(SHUT_RDWR))
            finished.signal()
        }
        thread.name = "s3-part"
        thread.start()
    }

    deinit {
        close(writeEnd)
        close(readEnd)
    }

    /// Sends bytes to the request, blocking while it is behind; every quarter second of waiting
    /// it calls `whileWaiting`, and gives up (`interrupted`) when that returns false. Throws the
    /// request's error if it ended.
    public func write(_ bytes: UnsafeRawBufferPointer, whileWaiting: () -> Bool) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = send(writeEnd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    var ready = pollfd(fd: writeEnd, events: Int16(POLLOUT), revents: 0)
                    if poll(&ready, 1, 250) == 0 && !whileWaiting() {
                        throw HaulError(.interrupted, "the part upload was stopped", transient: true)
                    }
                    continue
                }
                finished.wait()
                finished.signal()
                throw outcomeError() ?? HaulError(.s3, "the part upload ended early", transient: true)
            }
            offset += sent
        }
        bytesWritten += Int64(bytes.count)
    }

    /// Ends the body and waits for S3's answer, calling `whileWaiting` every quarter second
    /// (to keep a lease alive). - Returns: the part's ETag.
    public func finish(whileWaiting: () -> Void) throws -> String {
        if !closed {
            closed = true
            shutdown(writeEnd, Int32(SHUT_WR))
        }
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
        closed = true
        shutdown(writeEnd, Int32(SHUT_RDWR))
        finished.wait()
        finished.signal()
    }

    private func outcomeError() -> HaulError? {
        if case .failure(let error) = result.withLock({ $0 }) { return error }
        return nil
    }
}
