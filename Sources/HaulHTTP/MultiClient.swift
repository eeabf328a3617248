import CCurl
import HaulCore

/// Runs many GETs at once on one thread with libcurl's multi interface. The multi handle's
/// connection cache and the easy handles are kept between runs, so batch after batch of small
/// files to one origin reuses the same connections instead of opening one per file. Blocking,
/// owned by one thread, not `Sendable`.
public final class MultiClient {
    private let multi: UnsafeMutableRawPointer
    private var handles: [EasyHandle] = []

    /// One request of a run, with its callbacks (see `HTTPClient.fetch`).
    public struct Job {
        public var request: FetchRequest
        /// Called once with the final response's head; throw to refuse the body (only this job ends).
        public var onHead: (ResponseHead) throws -> Void
        /// Called with each chunk of the body; throw to abort this job.
        public var onData: (UnsafeRawBufferPointer) throws -> Void

        public init(request: FetchRequest, onHead: @escaping (ResponseHead) throws -> Void, onData: @escaping (UnsafeRawBufferPointer) throws -> Void) {
            self.request = request
            self.onHead = onHead
            self.onData = onData
        }
    }

    /// Creates the multi handle. `Curl.initialize()` must have run.
    public init() {
        multi = curl_multi_init()
    }

    deinit {
        // Every easy handle was removed when its job ended; the multi goes first, then the handles.
        curl_multi_cleanup(multi)
    }

    /// Runs `jobs` all at once and blocks until every one has ended, calling `onFinish` with the
    /// job's index and its outcome as each ends (errors as `HTTPClient.fetch` throws them).
    /// - Parameter shouldContinue: polled at least once a second; `false` interrupts the jobs still running.
    public func run(_ jobs: [Job], shouldContinue: () -> Bool = { true }, onFinish: (Int, Result<HTTPClient.Summary, Error>) -> Void) {
        while handles.count < jobs.count { handles.append(EasyHandle()) }
        var active: [UnsafeMutableRawPointer: Int] = [:]
        for (index, job) in jobs.enumerated() {
            let easy = handles[index]
            easy.prepare(job.request, context: TransferContext(onHead: job.onHead, onData: job.onData, shouldContinue: { true }))
            guard curl_multi_add_handle(multi, easy.pointer) == CURLM_OK else {
                onFinish(index, Result { try easy.finish(CURLE_FAILED_INIT) })
                continue
            }
            active[easy.pointer] = index
        }
        var running: Int32 = 0
        while !active.isEmpty {
            let performed = curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let pointer = message.pointee.easy_handle, let index = active[pointer] else { continue }
                let code = message.pointee.data.result
                end(pointer, index: index, active: &active, onFinish: onFinish) { try $0.finish(code) }
            }
            guard !active.isEmpty else { break }
            guard performed == CURLM_OK, shouldContinue() else {
                let failure =
                    performed == CURLM_OK
                    ? HaulError("interrupted", "download was interrupted", transient: true)
                    : HaulError("network", "libcurl's multi interface failed: \(String(cString: curl_multi_strerror(performed)))", transient: true)
                for (pointer, index) in active {
                    end(pointer, index: index, active: &active, onFinish: onFinish) {
                        $0.abandon()
                        throw failure
                    }
                }
                break
            }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    private func end(
        _ pointer: UnsafeMutableRawPointer, index: Int, active: inout [UnsafeMutableRawPointer: Int], onFinish: (Int, Result<HTTPClient.Summary, Error>) -> Void,
        outcome: (EasyHandle) throws -> HTTPClient.Summary
    ) {
        curl_multi_remove_handle(multi, pointer)
        active[pointer] = nil
        onFinish(index, Result { try outcome(handles[index]) })
    }
}
