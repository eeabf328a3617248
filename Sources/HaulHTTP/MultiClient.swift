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

    /// Runs `jobs` at most `connections` at a time (the next starts as one ends, on the
    /// connection it freed) and blocks until every one has ended, calling `onFinish` with the
    /// job's index and its outcome as each ends (errors as `HTTPClient.fetch` throws them).
    /// A job whose request has a pacer waits in it after each chunk; every job runs on this
    /// thread, so the wait holds back the run's other jobs too, as one limit for all should.
    /// - Parameter shouldContinue: polled at least once a second; `false` interrupts the jobs still running.
    public func run(
        _ jobs: [Job], connections: Int = 16, shouldContinue: () -> Bool = { true }, onFinish: (Int, Result<HTTPClient.Summary, Error>) -> Void
    ) {
        let jobs = jobs.map { job in
            guard let pacer = job.request.pacer else { return job }
            return Job(request: job.request, onHead: job.onHead) { bytes in
                try job.onData(bytes)
                pacer.pace(bytes.count)
            }
        }
        let width = max(1, connections)
        haul_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, width)
        while handles.count < min(width, jobs.count) { handles.append(EasyHandle()) }
        var idle = Array(handles.prefix(min(width, jobs.count)))
        var active: [UnsafeMutableRawPointer: (index: Int, easy: EasyHandle, request: FetchRequest, hop: Int)] = [:]
        var next = 0

        func finish(_ pointer: UnsafeMutableRawPointer, _ outcome: (EasyHandle) throws -> HTTPClient.Summary) {
            guard let (index, easy, _, _) = active.removeValue(forKey: pointer) else { return }
            curl_multi_remove_handle(multi, pointer)
            idle.append(easy)
            onFinish(index, Result { try outcome(easy) })
        }
        /// Follows a redirect the job on `pointer` ended with, on the same handle (see `FetchRequest.following`).
        func follow(_ pointer: UnsafeMutableRawPointer, to location: String) {
            guard let (index, easy, request, hop) = active[pointer] else { return }
            curl_multi_remove_handle(multi, pointer)
            easy.abandon()
            do {
                let nextHop = try request.following(location, hop: hop + 1)
                let job = jobs[index]
                easy.prepare(nextHop, context: TransferContext(onHead: job.onHead, onData: job.onData, shouldContinue: { true }))
                guard curl_multi_add_handle(multi, pointer) == CURLM_OK else { throw HaulError(.network, "libcurl could not start a request", transient: true) }
                active[pointer] = (index, easy, nextHop, hop + 1)
            } catch {
                active.removeValue(forKey: pointer)
                idle.append(easy)
                onFinish(index, .failure(error))
            }
        }
        func startWaitingJobs() {
            while next < jobs.count, let easy = idle.popLast() {
                let job = jobs[next]
                easy.prepare(job.request, context: TransferContext(onHead: job.onHead, onData: job.onData, shouldContinue: { true }))
                if curl_multi_add_handle(multi, easy.pointer) == CURLM_OK {
                    active[easy.pointer] = (next, easy, job.request, 0)
                } else {
                    idle.append(easy)
                    onFinish(next, Result { try easy.finish(CURLE_FAILED_INIT) })
                }
                next += 1
            }
        }

        startWaitingJobs()
        var running: Int32 = 0
        while !active.isEmpty {
            let performed = curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let pointer = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                if let location = active[pointer]?.easy.pendingRedirect(code) {
                    follow(pointer, to: location)
                } else {
                    finish(pointer) { try $0.finish(code) }
                }
            }
            guard performed == CURLM_OK, shouldContinue() else {
                let failure =
                    performed == CURLM_OK
                    ? HaulError(.interrupted, "download was interrupted", transient: true)
                    : HaulError(.network, "libcurl's multi interface failed: \(String(cString: curl_multi_strerror(performed)))", transient: true)
                for pointer in active.keys {
                    finish(pointer) {
                        $0.abandon()
                        throw failure
                    }
                }
                for index in next..<jobs.count { onFinish(index, .failure(failure)) }
                return
            }
            let started = next
            startWaitingJobs()
            // Jobs just started have nothing to wait for yet: perform them first.
            if next == started && !active.isEmpty { curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
    }
}
