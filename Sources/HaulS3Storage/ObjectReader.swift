import Foundation
import HaulArchive
import HaulCore
import HaulS3
import Synchronization

/// The body of one object `GET`, read as a stream: the request runs on its own thread and hands
/// its bytes over through a socket pair, so it waits (and memory stays at the socket's buffer)
/// while the reader is busy. The end of the stream is reported only once the request succeeded;
/// a failed request throws its error instead.
final class ObjectReader: ByteSource {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let outcome = Outcome()
    private let finished = DispatchSemaphore(value: 0)
    private var done = false

    /// Starts reading `key` of `bucket`.
    init(client: S3Client, bucket: String, key: String) throws {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw HaulError(.`internal`, "cannot create a socket pair: \(String(cString: strerror(errno)))", transient: true)
        }
        (readEnd, writeEnd) = (fds[0], fds[1])
        let thread = Thread { [writeEnd, outcome, finished] in
            do {
                try client.readObject(bucket: bucket, key: key) { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let sent = send(writeEnd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                        if sent < 0 && errno == EINTR { continue }
                        // The reader stopped (an error, or the archive ended early): stop reading.
                        guard sent > 0 else { return false }
                        offset += sent
                    }
                    return true
                }
            } catch let error as HaulError {
                outcome.error.withLock { $0 = error }
            } catch {
                outcome.error.withLock { $0 = HaulError(.`internal`, "\(error)", transient: true) }
            }
            shutdown(writeEnd, Int32(SHUT_WR))
            finished.signal()
        }
        thread.name = "s3-read"
        thread.start()
    }

    deinit {
        stop()
        close(readEnd)
        close(writeEnd)
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            let got = recv(readEnd, buffer, count, 0)
            if got > 0 { return got }
            if got < 0 && errno == EINTR { continue }
            // The end: whether it is the object's end is the request's to say.
            wait()
            if let error = outcome.error.withLock({ $0 }) { throw error }
            if got < 0 { throw HaulError(.`internal`, "cannot read the object's stream: \(String(cString: strerror(errno)))", transient: true) }
            return 0
        }
    }

    /// Ends the request if it still runs, and waits for its thread.
    func stop() {
        shutdown(readEnd, Int32(SHUT_RDWR))
        wait()
    }

    private func wait() {
        guard !done else { return }
        finished.wait()
        done = true
    }
}

/// How the request ended (`nil`: well, or not yet).
private final class Outcome: Sendable {
    let error = Mutex<HaulError?>(nil)
}
