import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulWorker

/// The connections of `haul get URL -o -` and the reorder buffer they fill. The first asks
/// for the whole file (`Range: bytes=0-`); its answer decides the rest. An origin that serves
/// ranges and names the version (a strong ETag or `Last-Modified`) gets a `StreamPlan`: more
/// connections fetch the segments ahead, each range pinned with `If-Range`, and the first stops
/// at its segment's end. Any other origin is read over that one connection. A cut connection
/// resumes its segment from the next byte, pinned the same way. The writer takes the bytes in
/// order with `next()`.
final class StreamFetch: @unchecked Sendable {
    /// What the connections are to do, as the command line says.
    struct Settings {
        let transfer: NewTransfer
        let stallTimeout: Int
        let lowestSpeed: LowestSpeed?
        let limitRate: Int64?
        let addressPolicy: AddressPolicy
        /// `-x`, and the most connections to one host.
        let connections: Int
        let hostLimit: Int
        let quiet: Bool
    }

    private let settings: Settings
    private let pacer: SharedRatePacer?
    private let condition = NSCondition()
    // Everything below is guarded by `condition`.
    private var window: StreamWindow?
    private var pinned: PinnedVersion?
    /// The `If-Range` value of every later range: the strong ETag, else `Last-Modified`.
    private var validator: String?
    private var failure: Error?
    private var stopped = false

    init(_ settings: Settings) {
        self.settings = settings
        pacer = settings.limitRate.map { SharedRatePacer(limit: $0) }
    }

    /// Starts the first connection.
    func start() {
        Thread { self.connection(first: true) }.start()
    }

    /// The next bytes of the file in order, waiting for them; `nil` once the file is done.
    /// - Throws: the error that ended a connection for good.
    func next() throws -> [UInt8]? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let failure { throw failure }
            if let chunk = window?.take() {
                condition.broadcast()
                return chunk
            }
            if window?.isFinished == true { return nil }
            condition.wait()
        }
    }

    /// The file's size, once known.
    var size: Int64? { locked { pinned?.size } }

    /// Stops every connection (the reader is gone, or the stream failed).
    func stop() {
        locked {
            stopped = true
            condition.broadcast()
        }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    // MARK: - One connection

    /// A connection's life: the first fetches segment 0 (and decides the plan), then each
    /// takes the next segment in the window until none is left.
    private func connection(first: Bool) {
        let client = HTTPClient()
        do {
            if first { try fetch(segment: 0, client: client) }
            while let segment = claim() { try fetch(segment: segment, client: client) }
        } catch {
            locked {
                if failure == nil && !stopped { failure = error }
                stopped = true
                condition.broadcast()
            }
        }
    }

    /// The next segment to fetch, waiting while the window is full; `nil` when none is left.
    private func claim() -> Int? {
        locked {
            while !stopped, window != nil {
                switch window!.claim() {
                case .segment(let segment): return segment
                case .none: return nil
                case .wait: condition.wait()
                }
            }
            return nil
        }
    }

    /// Fetches `segment` to its end, resuming a cut connection from the next byte.
    private func fetch(segment: Int, client: HTTPClient) throws {
        let maxAttempts = settings.transfer.options.maxAttempts ?? 6
        var attempt = 0
        while true {
            attempt += 1
            let before = locked { window?.nextByte(of: segment) ?? 0 }
            do {
                try request(segment: segment, client: client)
                return
            } catch is SegmentEnd {
                return
            } catch let error as HaulError where error.isTransient {
                let (now, canResume) = locked { () -> (Int64, Bool) in
                    let now = window?.nextByte(of: segment) ?? 0
                    // The only segment, with nothing received: ask again as at first.
                    if now == 0, window?.count == 1 { window = nil }
                    return (now, validator != nil || now == 0)
                }
                if locked({ stopped }) { throw error }
                // Only failures in a row count: an attempt that brought bytes starts the count again.
                if now > before { attempt = 1 }
                guard attempt < maxAttempts else { throw error }
                guard canResume else {
                    throw HaulError(
                        error.code, "\(error.message); cannot resume after \(now) bytes: the origin sends no ETag or Last-Modified",
                        hint: "run the command again, or give -o FILE")
                }
                let delay = Backoff(base: 1, cap: 30).delay(afterAttempt: attempt, retryAfter: error.retryAfter, jitter: Double.random(in: 0..<1))
                if !settings.quiet {
                    Output.error(
                        "haul: \(SafeText.cleanLine(error.message)); \(now > 0 ? "resuming at byte \(now)" : "retrying") in \(Int(delay.rounded(.up))) s")
                }
                let until = Date().addingTimeInterval(delay)
                try locked {
                    while !stopped, condition.wait(until: until) {}
                    if stopped { throw error }
                }
            }
        }
    }

    /// One GET for the rest of `segment`: the whole file when nothing is planned yet, else the
    /// range from its next byte, pinned with `If-Range`.
    private func request(segment: Int, client: HTTPClient) throws {
        let (first, last, ifRange) = locked { () -> (Int64, Int64?, String?) in
            guard let window else { return (0, nil, nil) }
            // The last segment is asked for to the end, as a resume of the whole file is.
            return (window.nextByte(of: segment), endsEarly(segment) ? window.lastByte(of: segment) : nil, validator)
        }
        try client.fetch(
            fetchRequest(first: first, last: last, ifRange: first > 0 || last != nil ? ifRange : nil),
            onHead: { head in
                try self.locked {
                    guard self.window != nil, let pinned = self.pinned else { return try self.decide(head) }
                    try RangeCheck.validate(head, first: first, last: last, pinned: pinned, url: self.settings.transfer.url)
                }
            },
            onData: { bytes in
                let enough = try self.locked { () -> Bool in
                    while !self.stopped, self.window?.canReceive(segment) == false { self.condition.wait() }
                    // Changed in place: a copy would copy the chunks held.
                    guard !self.stopped, self.window != nil else { throw Stopped() }
                    // The first connection asked for the whole file: it stops where its segment
                    // ends (which the writer may have taken already).
                    if self.window!.isComplete(segment) { return true }
                    let added = self.window!.receive(bytes, segment: segment)
                    self.condition.broadcast()
                    return added < bytes.count || (self.window!.isComplete(segment) && self.endsEarly(segment))
                }
                if enough { throw SegmentEnd() }
            },
            shouldContinue: { !self.locked { self.stopped } })
        try locked {
            guard window != nil else { return }
            if let last = window!.lastByte(of: segment), !window!.isComplete(segment) {
                // The body ended early without libcurl noticing (no length announced on a hop).
                throw HaulError(.network, "the connection ended at byte \(window!.nextByte(of: segment)), before byte \(last + 1)", transient: true)
            }
            // A body of unknown length ends the file where it ends.
            if window!.lastByte(of: segment) == nil {
                window!.end(segment)
                condition.broadcast()
            }
        }
    }

    /// Whether `segment` ends before the file does (a segment of a plan but the last). Locked.
    private func endsEarly(_ segment: Int) -> Bool {
        guard let last = window?.lastByte(of: segment) else { return false }
        return last + 1 != pinned?.size
    }

    /// Decides from the first answer how the file is fetched, and makes its window.
    private func decide(_ head: ResponseHead) throws {
        let url = settings.transfer.url
        let size: Int64?
        switch head.status {
        case 206:
            guard let range = head.contentRange, range.first == 0, range.total == nil || range.last == range.total! - 1 else {
                throw HaulError(
                    .badContentRange,
                    "origin answered 206 with Content-Range '\(SafeText.cleanLine(head["content-range"] ?? ""))' to a request for the whole file",
                    hint: "the origin's range support is broken", transient: true)
            }
            size = range.total
        case 200:
            size = head.contentLength
        case 416 where (head.contentRange?.total ?? 0) == 0:
            // No range from byte 0 is unsatisfiable unless the file is empty (RFC 9110 §14.1.1).
            size = 0
        default:
            throw StatusPolicy.error(for: head, url: url)
        }
        if let expected = settings.transfer.options.expectedSize, let size, size != expected {
            throw HaulError(.sizeMismatch, "the origin's file has \(size) bytes where the Metalink says \(expected)")
        }
        let etag = head.hasStrongETag ? head.etag : nil
        pinned = PinnedVersion(size: size, etag: etag, lastModified: head["last-modified"])
        validator = etag ?? head["last-modified"]
        var window: StreamWindow
        var more = 0
        if head.status == 206, let size, size > 0, validator != nil {
            let plan = StreamPlan(
                size: size, connections: settings.connections, hostLimit: settings.hostLimit,
                segmentSize: settings.transfer.options.automaticSegments == true ? nil : settings.transfer.segmentSize)
            window = StreamWindow(plan: plan)
            more = plan.connections - 1
        } else {
            // No ranges, or no validator to pin them with: the one connection reads it all.
            window = StreamWindow(lengths: [size], window: 1, headHold: StreamPlan.bufferLimit / 8)
        }
        _ = window.claim()
        self.window = window
        // An empty file is done already.
        condition.broadcast()
        for _ in 0..<more { Thread { self.connection(first: false) }.start() }
    }

    private func fetchRequest(first: Int64, last: Int64?, ifRange: String?) -> FetchRequest {
        let transfer = settings.transfer
        var tls = TLSOptions(caBundle: ProcessInfo.processInfo.environment["HAUL_CA_BUNDLE"])
        if let ca = transfer.options.caCert { tls.caBundle = ca }
        if transfer.options.insecure == true { tls.insecure = true }
        var request = FetchRequest(
            url: transfer.url, headerLines: transfer.headers.map { "\($0.name): \($0.value)" }, first: first, last: last, ifRange: ifRange, tls: tls,
            stallTimeout: settings.stallTimeout)
        if let limit = transfer.options.maxFileSize { request.bodyLimit = BodyLimit(bytes: limit, isFreeSpace: false) }
        request.addressPolicy = settings.addressPolicy
        request.pacer = pacer
        request.lowestSpeed =
            settings.limitRate == nil
            ? LowestSpeed.forTransfer(worker: settings.lowestSpeed, bytesPerSecond: transfer.options.lowestSpeed, seconds: transfer.options.lowestSpeedTime)
            : nil
        request.allowDowngrade = transfer.checksum != nil || transfer.options.allowDowngrade == true
        return request
    }

    /// The first connection has all of its segment; the rest of its answer is not wanted.
    private struct SegmentEnd: Error {}
    /// The stream was stopped while this connection waited.
    private struct Stopped: Error {}
}
