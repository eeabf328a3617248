import CCurl
import Foundation
import HaulCore

/// libcurl easy handles kept between requests, so that a request reuses the connection an
/// earlier one left open instead of opening a TCP (and TLS) connection of its own: a handle
/// keeps its idle connections through `curl_easy_reset`. Object-store requests and uploads
/// take a handle for one request and give it back, so there are as many connections per host
/// as requests run at once. With a limit (``limit(busy:)``), a request that finds every
/// handle busy waits a moment for one to come back rather than open one more connection.
///
/// Not a `CURLSH` share of the connection cache: libcurl does not support sharing connections
/// between concurrent threads. A handle is used by one thread at a time, which it supports.
public final class CurlHandles: @unchecked Sendable {
    // `idle`, `busy` and `busyLimit` are guarded by `condition`, signaled when a handle comes back.
    /// The handles of the whole process (any host: libcurl reuses a connection only for the
    /// same host, port and TLS settings).
    public static let shared = CurlHandles(idleLimit: 32)

    private let condition = NSCondition()
    private var idle: [UnsafeMutableRawPointer] = []
    /// Handles taken and not given back yet.
    private var busy = 0
    private var busyLimit = Int.max
    /// Idle handles kept at most; more are closed with their connections.
    private let idleLimit: Int
    /// How long a request waits for a busy handle to come back before it opens a connection of
    /// its own: requests that wait on each other (a `PutObject` fed by the lane that waits for
    /// it) only slow down, never wait for ever.
    private let patience: TimeInterval

    /// A pool that keeps at most `idleLimit` idle handles; past the limit (if any), a request
    /// waits up to `patience` seconds for a handle.
    public init(idleLimit: Int, patience: TimeInterval = 2) {
        self.idleLimit = idleLimit
        self.patience = patience
    }

    /// Keeps the handles in use at once, and so the connections to a host, at about `busy`:
    /// beyond it a request waits for a handle to come back (at most its patience). A worker
    /// sets it from its lanes, above the requests that may wait on each other.
    public func limit(busy: Int) {
        condition.withLock { busyLimit = max(1, busy) }
    }

    /// A handle for one request, reset to libcurl's defaults (the most recently returned one,
    /// whose connection is the likeliest to be alive); give it back with ``give(_:)``.
    public func take() throws(HaulError) -> UnsafeMutableRawPointer {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: patience)
        while idle.isEmpty && busy >= busyLimit && condition.wait(until: deadline) {}
        busy += 1
        let parked = idle.popLast()
        condition.unlock()
        if let parked { return parked }
        guard let handle = curl_easy_init() else {
            condition.withLock { busy -= 1 }
            condition.signal()
            throw HaulError(.curl, "libcurl could not create a handle")
        }
        return handle
    }

    /// Takes `handle` back once its request is over: its options are reset (no pointer to the
    /// caller's buffers or callbacks stays in it) and its connections are kept for the next one.
    public func give(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let kept = condition.withLock {
            busy -= 1
            guard idle.count < idleLimit else { return false }
            idle.append(handle)
            return true
        }
        condition.signal()
        if !kept { curl_easy_cleanup(handle) }
    }
}
