import Foundation
import HaulCore
import HaulHTTP
import HaulQueue

/// `haul get URL -o -`: the file written to standard output as the origin sends it, in order,
/// over one connection, with nothing on disk and no database. A broken connection resumes with
/// a ranged GET from the next byte, pinned with `If-Range` so another version of the file is
/// never joined to what was sent. Standard output carries only the file's bytes.
struct StandardOutputStream {
    /// The transfer as `TransferFlags.build` made it: URL, headers, checksum, limits, attempts.
    let transfer: NewTransfer
    /// Settings of the in-process requests a get makes (`--stall-timeout`, `--lowest-speed`, ...).
    let stallTimeout: Int
    let lowestSpeed: LowestSpeed?
    let limitRate: Int64?
    let addressPolicy: AddressPolicy
    /// No progress display.
    let quiet: Bool

    /// Refuses, before anything is fetched, the options a stream cannot honour.
    static func refuse(_ arguments: Arguments, urls: Int, metalinkFiles: Int) throws {
        func refusal(_ what: String, _ hint: String) -> HaulError {
            HaulError.usage("-o - writes one file to standard output as it arrives; \(what)", hint: hint)
        }
        if urls > 1 || arguments.value("--input-file") != nil || metalinkFiles > 1 {
            throw refusal("it takes one URL (no -i, no Metalink of several files)", "give one URL, or -o DIR/ for several")
        }
        if arguments.has("--json") { throw refusal("--json would mix with the file's bytes", "drop --json, or give -o FILE") }
        if arguments.has("--extract") || arguments.value("--extract-to") != nil || arguments.value("--upload-to") != nil {
            throw refusal("--extract and --upload-to need the whole file on disk", "give -o FILE or -o DIR/")
        }
        if arguments.has("--timestamping") {
            throw refusal("-N compares with a file saved before, and standard output keeps none", "give -o a path or s3:// URL, or drop -N")
        }
        if !arguments.all("--mirror").isEmpty {
            throw refusal("it reads one origin in order, so --mirror has nothing to spread", "drop --mirror, or give -o FILE")
        }
    }

    /// Streams the file; returns the exit status (0 also when the reader closed the pipe early,
    /// as `haul get URL -o - | head -c 100` does).
    /// - Throws: the error that ended the stream (its code gives the exit status); a checksum
    ///   mismatch once every byte was sent (the bytes cannot be taken back: exit 10).
    func run() throws -> Int32 {
        var state = State(transfer: transfer)
        let maxAttempts = transfer.options.maxAttempts ?? 6
        let client = HTTPClient()
        let pacer = limitRate.map { SharedRatePacer(limit: $0) }
        var bar = quiet ? nil : ProgressBar(terminal: Output.stderrIsTerminal)
        var lastDrawn = Date.distantPast
        // A line drawn on a terminal is ended before haul exits, whatever ends the stream.
        defer { if lastDrawn != .distantPast { bar?.finish() } }
        var attempt = 0
        while true {
            attempt += 1
            let sent = state.written
            do {
                try client.fetch(
                    request(resumingAt: state.written, validator: state.validator, pacer: pacer),
                    onHead: { head in try state.accept(head, url: transfer.url) },
                    onData: { bytes in
                        try Self.write(bytes)
                        state.record(bytes)
                        if bar != nil, Date().timeIntervalSince(lastDrawn) >= 0.2 {
                            bar?.update(bytes: state.written, size: state.pinned?.size, segments: "", state: "streaming")
                            lastDrawn = Date()
                        }
                    })
                if let size = state.pinned?.size, state.written != size {
                    // The body ended early without libcurl noticing (no length announced on a hop).
                    throw HaulError(.network, "the connection ended after \(state.written - sent) bytes, before byte \(size)", transient: true)
                }
                break
            } catch is ReaderGone {
                // The reader took what it wanted (`head -c 100`): a normal end, nothing to say.
                return ExitCode.success
            } catch let error as HaulError where error.isTransient {
                // Only failures in a row count: an attempt that sent bytes starts the count again.
                if state.written > sent { attempt = 1 }
                guard attempt < maxAttempts else { throw error }
                if state.written > 0 && state.validator == nil {
                    throw HaulError(
                        error.code, "\(error.message); cannot resume after \(state.written) bytes: the origin sends no ETag or Last-Modified",
                        hint: "run the command again, or give -o FILE")
                }
                let delay = Backoff(base: 1, cap: 30).delay(afterAttempt: attempt, retryAfter: error.retryAfter, jitter: Double.random(in: 0..<1))
                if !quiet {
                    if lastDrawn != .distantPast { bar?.finish() }
                    Output.error(
                        "haul: \(SafeText.cleanLine(error.message)); \(state.written > 0 ? "resuming at byte \(state.written)" : "retrying") in \(Int(delay.rounded(.up))) s"
                    )
                }
                Thread.sleep(forTimeInterval: delay)
            }
        }
        if lastDrawn != .distantPast { bar?.update(bytes: state.written, size: state.pinned?.size, segments: "", state: "done") }
        if let expected = transfer.checksum, let computed = state.digester?.finish(), computed != expected {
            throw HaulError(
                .checksumMismatch,
                "checksum mismatch: the \(state.written) bytes written to standard output have \(computed), not \(expected)",
                hint: "the reader has them already: discard its result")
        }
        return ExitCode.success
    }

    /// The GET for the bytes from `first` on: the whole file at first, then a range pinned to
    /// the version already sent.
    private func request(resumingAt first: Int64, validator: String?, pacer: SharedRatePacer?) -> FetchRequest {
        var request = FetchRequest(
            url: transfer.url, headerLines: transfer.headers.map { "\($0.name): \($0.value)" }, first: first > 0 ? first : nil,
            ifRange: first > 0 ? validator : nil, tls: tls, stallTimeout: stallTimeout)
        if let limit = transfer.options.maxFileSize { request.bodyLimit = BodyLimit(bytes: limit, isFreeSpace: false) }
        request.addressPolicy = addressPolicy
        request.pacer = pacer
        request.lowestSpeed =
            limitRate == nil
            ? LowestSpeed.forTransfer(worker: lowestSpeed, bytesPerSecond: transfer.options.lowestSpeed, seconds: transfer.options.lowestSpeedTime) : nil
        request.allowDowngrade = transfer.checksum != nil || transfer.options.allowDowngrade == true
        return request
    }

    private var tls: TLSOptions {
        var tls = TLSOptions(caBundle: ProcessInfo.processInfo.environment["HAUL_CA_BUNDLE"])
        if let ca = transfer.options.caCert { tls.caBundle = ca }
        if transfer.options.insecure == true { tls.insecure = true }
        return tls
    }

    /// Writes every byte to standard output.
    /// - Throws: `ReaderGone` when the reader closed the pipe; an `io` error for any other failure.
    private static func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let done = Foundation.write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
            if done < 0 && errno == EINTR { continue }
            if done < 0 && errno == EPIPE { throw ReaderGone() }
            guard done > 0 else {
                throw HaulError(
                    .io, "cannot write the file to standard output: \(String(cString: strerror(errno)))",
                    hint: "make room where standard output goes, or give -o FILE")
            }
            offset += done
        }
    }

    /// Standard output's reader is gone.
    private struct ReaderGone: Error {}

    /// What was sent so far and the version it belongs to.
    private struct State {
        /// Bytes written to standard output.
        var written: Int64 = 0
        /// The version the first answer announced; every resumed range must match it.
        var pinned: PinnedVersion?
        /// The `If-Range` value of a resume: the strong ETag, else `Last-Modified`.
        var validator: String?
        let digester: Digester?
        let expectedSize: Int64?

        init(transfer: NewTransfer) {
            digester = transfer.checksum.map { Digester($0.algorithm) }
            expectedSize = transfer.options.expectedSize
        }

        /// Checks the head of an answer before its body is sent on.
        mutating func accept(_ head: ResponseHead, url: String) throws {
            // A resume: the range must be of the version already sent.
            if written > 0, let pinned {
                try RangeCheck.validate(head, first: written, last: nil, pinned: pinned, url: url)
                return
            }
            guard head.status == 200 else { throw StatusPolicy.error(for: head, url: url) }
            if let expectedSize, let length = head.contentLength, length != expectedSize {
                throw HaulError(.sizeMismatch, "the origin's file has \(length) bytes where the Metalink says \(expectedSize)")
            }
            let etag = head.hasStrongETag ? head.etag : nil
            pinned = PinnedVersion(size: head.contentLength, etag: etag, lastModified: head["last-modified"])
            validator = etag ?? head["last-modified"]
        }

        /// Counts bytes just written.
        mutating func record(_ bytes: UnsafeRawBufferPointer) {
            digester?.update(bytes)
            written += Int64(bytes.count)
        }
    }
}
