import CCurl
import HaulCore
import Synchronization

/// libcurl easy handles kept between requests, so that a request reuses the connection an
/// earlier one left open instead of opening a TCP (and TLS) connection of its own: a handle
/// keeps its idle connections through `curl_easy_reset`. Object-store requests and uploads
/// take a handle for one request and give it back; a thread that needs one while all are busy
/// gets a new one, so there are about as many connections per host as requests run at once.
///
/// Not a `CURLSH` share of the connection cache: libcurl does not support sharing connections
/// between concurrent threads. A handle is used by one thread at a time, which it supports.
public final class CurlHandles: Sendable {
    /// The handles of the whole process (any host: libcurl reuses a connection only for the
    /// same host, port and TLS settings).
    public static let shared = CurlHandles(idleLimit: 32)

    /// A parked handle; only the thread that takes it touches it.
    private struct Parked: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private let idle = Mutex<[Parked]>([])
    /// Idle handles kept at most; more are closed with their connections.
    private let idleLimit: Int

    /// A pool that keeps at most `idleLimit` idle handles.
    public init(idleLimit: Int) { self.idleLimit = idleLimit }

    /// A handle for one request, reset to libcurl's defaults (the most recently returned one,
    /// whose connection is the likeliest to be alive); give it back with ``give(_:)``.
    public func take() throws(HaulError) -> UnsafeMutableRawPointer {
        if let parked = idle.withLock({ $0.popLast() }) { return parked.pointer }
        guard let handle = curl_easy_init() else { throw HaulError(.curl, "libcurl could not create a handle") }
        return handle
    }

    /// Takes `handle` back once its request is over: its options are reset (no pointer to the
    /// caller's buffers or callbacks stays in it) and its connections are kept for the next one.
    public func give(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let kept = idle.withLock { handles in
            guard handles.count < idleLimit else { return false }
            handles.append(Parked(pointer: handle))
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }
}
