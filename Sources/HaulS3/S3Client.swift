import CCurl
import Foundation
import HaulCore
import HaulHTTP
import Synchronization

/// Talks to an S3-compatible service with libcurl, signing every request with SigV4
/// (`CURLOPT_AWS_SIGV4`). Blocking: call it from a dedicated thread, never the cooperative pool.
/// Stateless between requests but for what the store turned out not to support (`support`),
/// so one client can be shared by threads.
public struct S3Client: Sendable {
    public let config: S3Config
    /// The optional features the store refused with `501 NotImplemented`, shared by copies.
    public let support = S3Support()

    /// A client for `config`.
    public init(config: S3Config) { self.config = config }

    /// An answer, whatever its status.
    public struct Response: Sendable {
        public var status = 0
        public var headers: [String: String] = [:]
        public var body = Data()
    }

    /// Where a request's body comes from.
    public enum Body {
        case none
        case bytes(Data)
        /// `length` bytes read from `source` as libcurl asks for them.
        case stream(ByteFeed, length: Int64)
    }

    /// Sends `request` once. Network failures throw (as `CurlFailure` words them); any HTTP status returns.
    /// - Parameter sink: receives the body of a 2xx answer instead of `Response.body` (for GET).
    public func send(_ request: S3Request, body: Body = .none, sink: ((UnsafeRawBufferPointer) -> Bool)? = nil) throws -> Response {
        let replayable = if case .stream = body { false } else { true }
        return try config.credentials.signing(replayable: replayable) { credentials in
            try CurlCall(config: config, credentials: credentials, sink: sink).perform(request, body: body)
        }
    }

    /// Sends `request` and fails on a non-2xx answer (or a 200 carrying an `<Error>`, as
    /// `CompleteMultipartUpload` may send), retrying answers that say to slow down or that the
    /// service failed (`SlowDown`, 500, 503) and transient network failures (as `CurlFailure`
    /// tells them) up to `attempts` times, waiting as `RetryPolicy.store` says. A certificate
    /// the store's TLS cannot be verified with fails at once.
    public func perform(_ request: S3Request, body: Data? = nil, doing: String, bucket: String, attempts: Int = RetryPolicy.store.attempts) throws -> Response {
        var policy = RetryPolicy.store
        policy.attempts = attempts
        var retry = RetryLoop(policy: policy)
        return try retry.run {
            let response = try send(request, body: body.map(Body.bytes) ?? .none)
            if let error = failure(response, doing: doing, bucket: bucket) { throw error }
            return response
        }
    }

    /// The error a response stands for, `nil` when it is a success.
    public func failure(_ response: Response, doing: String, bucket: String) -> HaulError? {
        let text = String(decoding: response.body.prefix(64 << 10), as: UTF8.self)
        let errorInBody = text.contains("<Error>")
        guard !(200...299).contains(response.status) || errorInBody else { return nil }
        return S3Failure.error(
            status: errorInBody && response.status == 200 ? 500 : response.status, code: S3XML.value("Code", in: text),
            message: S3XML.value("Message", in: text), bucketRegion: response.headers["x-amz-bucket-region"], doing: doing, bucket: bucket,
            config: config)
    }
}

/// A body fed from a file descriptor (a file or the read end of a socket pair); `cancel`
/// makes the next read abort the request.
public final class ByteFeed: Sendable {
    let fd: Int32
    private let canceled = Atomic<Bool>(false)
    /// Bytes still to read (reads never go past them, so a part of a file ends where it should).
    private let remaining: Atomic<Int64>

    /// Reads from `fd` (not closed here), at most `limit` bytes.
    public init(fd: Int32, limit: Int64 = .max) {
        self.fd = fd
        remaining = Atomic(limit)
    }

    /// Reads up to `count` bytes into `buffer`, within the limit.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        let left = remaining.load(ordering: .relaxed)
        guard left > 0 else { return 0 }
        let got = Foundation.read(fd, buffer, Int(min(Int64(count), left)))
        if got > 0 { remaining.subtract(Int64(got), ordering: .relaxed) }
        return got
    }

    /// Makes libcurl abort the request at its next read.
    public func cancel() { canceled.store(true, ordering: .sequentiallyConsistent) }

    var isCanceled: Bool { canceled.load(ordering: .sequentiallyConsistent) }
}

/// One request on a pooled easy handle (`CurlHandles`), so that it reuses the connection an
/// earlier request left open; all on the calling thread.
private final class CurlCall {
    let config: S3Config
    let credentials: S3Credentials
    let sink: ((UnsafeRawBufferPointer) -> Bool)?
    var response = S3Client.Response()
    var feed: ByteFeed?
    var sinkStopped = false

    init(config: S3Config, credentials: S3Credentials, sink: ((UnsafeRawBufferPointer) -> Bool)?) {
        self.config = config
        self.credentials = credentials
        self.sink = sink
    }

    func perform(_ request: S3Request, body: S3Client.Body) throws -> S3Client.Response {
        let handle = try CurlHandles.shared.take()
        var headers: UnsafeMutablePointer<curl_slist>?
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer[0] = 0
        defer {
            CurlHandles.shared.give(handle)
            curl_slist_free_all(headers)
            errorBuffer.deallocate()
        }
        // libcurl 7.88 signs an upload's body as empty unless told its hash: say it is unsigned.
        // No header-removing lines ("Expect:"): 7.88 signs them as empty headers it then does not send.
        var lines = request.headers + ["x-amz-content-sha256: UNSIGNED-PAYLOAD"]
        if let token = credentials.sessionToken { lines.append("x-amz-security-token: \(token)") }
        for line in lines { headers = curl_slist_append(headers, line) }
        CurlSetup.common(handle, url: request.url, tls: TLSOptions(caBundle: config.caBundle), stallSeconds: 120, errorBuffer: errorBuffer)
        haul_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
        haul_easy_setopt_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(config.region):s3")
        haul_easy_setopt_string(handle, CURLOPT_USERNAME, credentials.accessKeyID)
        haul_easy_setopt_string(handle, CURLOPT_PASSWORD, credentials.secretAccessKey)
        haul_easy_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1)
        switch request.method {
        case "HEAD": haul_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
        case "GET": break
        case "PUT": haul_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
        case "POST": haul_easy_setopt_long(handle, CURLOPT_POST, 1)
        default: haul_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        switch body {
        case .none:
            if request.method == "PUT" { haul_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, 0) }
            if request.method == "POST" {
                haul_easy_setopt_long(handle, CURLOPT_POSTFIELDSIZE, 0)
                haul_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, "")
            }
        case .bytes(let data):
            if request.method == "PUT" {
                haul_easy_setopt_long(handle, CURLOPT_UPLOAD, 0)
                haul_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "PUT")
            }
            // The size first: libcurl then copies exactly that many bytes, whatever they are
            // (a text conversion would corrupt a binary body).
            haul_easy_setopt_long(handle, CURLOPT_POSTFIELDSIZE, data.count)
            var bytes = [UInt8](data)
            haul_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, &bytes)
        case .stream(let source, let length):
            feed = source
            haul_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(length))
            haul_easy_setopt_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, 512 * 1024)
            haul_easy_setopt_pointer(handle, CURLOPT_READDATA, me)
            haul_easy_setopt_read_function(handle, readCallback)
        }
        haul_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, me)
        haul_easy_setopt_write_function(handle, writeCallback)
        haul_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, me)
        haul_easy_setopt_header_function(handle, headerCallback)
        let code = curl_easy_perform(handle)
        if feed?.isCanceled == true { throw HaulError(.interrupted, "the upload to S3 was stopped", transient: true) }
        if sinkStopped { throw HaulError(.interrupted, "reading from S3 was stopped", transient: true) }
        guard code == CURLE_OK else {
            throw CurlFailure.error(code, detail: String(cString: errorBuffer), url: request.url, bytes: 0, direction: .store)
        }
        var status = 0
        haul_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        response.status = status
        return response
    }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> CurlCall {
        Unmanaged<CurlCall>.fromOpaque(pointer!).takeUnretainedValue()
    }
}

private let readCallback: haul_data_callback = { buffer, size, count, userdata in
    let call = CurlCall.from(userdata)
    guard let feed = call.feed, let buffer else { return Int(haul_readfunc_abort()) }
    while true {
        if feed.isCanceled { return Int(haul_readfunc_abort()) }
        let got = feed.read(into: buffer, count: size * count)
        if got < 0 && errno == EINTR { continue }
        // An early end (the writer stopped) must not pass as a complete body.
        if got <= 0 { return Int(haul_readfunc_abort()) }
        return got
    }
}

private let writeCallback: haul_data_callback = { data, size, count, userdata in
    let call = CurlCall.from(userdata)
    let length = size * count
    let bytes = UnsafeRawBufferPointer(start: data, count: length)
    if let sink = call.sink, (200...299).contains(call.response.status) {
        guard sink(bytes) else {
            call.sinkStopped = true
            return 0
        }
    } else if call.response.body.count < 1 << 20 {
        call.response.body.append(contentsOf: bytes)
    }
    return length
}

private let headerCallback: haul_data_callback = { data, size, count, userdata in
    let call = CurlCall.from(userdata)
    let length = size * count
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self).trimmingWhitespace()
    if line.hasPrefix("HTTP/") {
        let words = line.split(separator: " ")
        call.response.status = words.count > 1 ? Int(words[1]) ?? 0 : 0
        call.response.headers = [:]
    } else if let colon = line.firstIndex(of: ":") {
        call.response.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingWhitespace()
    }
    return length
}
