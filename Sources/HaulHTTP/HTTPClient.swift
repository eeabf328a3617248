import CCurl
import Foundation
import HaulCore

/// A reusable libcurl easy handle for GETs. Blocking: one thread owns it at a time and it is
/// not `Sendable`. Reusing it across requests keeps the connection to an origin alive.
public final class HTTPClient {
    private let handle: UnsafeMutableRawPointer
    private var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

    /// Creates a handle. `Curl.initialize()` must have run.
    public init() {
        handle = curl_easy_init()
    }

    deinit { curl_easy_cleanup(handle) }

    /// What a completed request returned.
    public struct Summary: Sendable {
        /// The final response's head.
        public let head: ResponseHead
        /// Body bytes delivered to `onData`.
        public let bytes: Int64
    }

    /// Runs one GET. Blocks until the body ends, a callback throws, or `shouldContinue` says stop.
    /// - Parameters:
    ///   - onHead: called once with the final response's head, before any body byte; throw to refuse the body.
    ///   - onData: called with each received chunk (valid only during the call); throw to abort.
    ///   - shouldContinue: polled about once a second and on each chunk; `false` aborts with `interrupted`.
    /// - Throws: the callbacks' errors unchanged, or a `HaulError` describing the network failure.
    @discardableResult
    public func fetch(
        _ request: FetchRequest,
        onHead: (ResponseHead) throws -> Void,
        onData: (UnsafeRawBufferPointer) throws -> Void,
        shouldContinue: () -> Bool = { true }
    ) throws -> Summary {
        try withoutActuallyEscaping(onHead) { onHead in
            try withoutActuallyEscaping(onData) { onData in
                try withoutActuallyEscaping(shouldContinue) { shouldContinue in
                    let context = TransferContext(onHead: onHead, onData: onData, shouldContinue: shouldContinue)
                    return try perform(request, context: context)
                }
            }
        }
    }

    private func perform(_ request: FetchRequest, context: TransferContext) throws -> Summary {
        curl_easy_reset(handle)
        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        for line in request.headerLines { headers = curl_slist_append(headers, line) }
        if let ifRange = request.ifRange { headers = curl_slist_append(headers, "If-Range: \(ifRange)") }

        configure(request)
        haul_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
        if let range = request.rangeValue?.dropFirst("bytes=".count) {
            haul_easy_setopt_string(handle, CURLOPT_RANGE, String(range))
        }

        let unmanaged = Unmanaged.passUnretained(context)
        haul_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, unmanaged.toOpaque())
        haul_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, unmanaged.toOpaque())
        haul_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, unmanaged.toOpaque())
        haul_easy_setopt_write_function(handle, writeCallback)
        haul_easy_setopt_header_function(handle, headerCallback)
        haul_easy_setopt_xferinfo_function(handle, progressCallback)

        errorBuffer[0] = 0
        let code = errorBuffer.withUnsafeMutableBufferPointer { buffer -> CURLcode in
            haul_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            return curl_easy_perform(handle)
        }
        haul_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, nil)
        if let failure = context.failure { throw failure }
        guard code == CURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CurlFailure.error(code, detail: detail, url: request.url, bytes: context.bytes)
        }
        if !context.headDelivered {
            try context.deliverHead()
            if let failure = context.failure { throw failure }
        }
        return Summary(head: context.head, bytes: context.bytes)
    }

    private func configure(_ request: FetchRequest) {
        haul_easy_setopt_string(handle, CURLOPT_URL, request.url)
        haul_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        haul_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1)
        haul_easy_setopt_long(handle, CURLOPT_MAXREDIRS, 10)
        haul_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        haul_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        haul_easy_setopt_string(handle, CURLOPT_USERAGENT, Curl.userAgent)
        haul_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, 512 * 1024)
        haul_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 30)
        haul_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        haul_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, request.stallTimeout)
        haul_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
        haul_easy_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1)
        if let bundle = request.tls.caBundle { haul_easy_setopt_string(handle, CURLOPT_CAINFO, bundle) }
        if request.tls.insecure {
            haul_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 0)
            haul_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0)
        }
    }
}

/// The state libcurl's C callbacks reach through their `userdata` pointer during one request.
private final class TransferContext {
    let onHead: (ResponseHead) throws -> Void
    let onData: (UnsafeRawBufferPointer) throws -> Void
    let shouldContinue: () -> Bool
    var head = ResponseHead(status: 0)
    var headDelivered = false
    var bytes: Int64 = 0
    var failure: Error?

    init(onHead: @escaping (ResponseHead) throws -> Void, onData: @escaping (UnsafeRawBufferPointer) throws -> Void, shouldContinue: @escaping () -> Bool) {
        self.onHead = onHead
        self.onData = onData
        self.shouldContinue = shouldContinue
    }

    func deliverHead() throws {
        headDelivered = true
        do { try onHead(head) } catch { failure = error }
    }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> TransferContext {
        Unmanaged<TransferContext>.fromOpaque(pointer!).takeUnretainedValue()
    }
}

private let headerCallback: haul_data_callback = { data, size, count, userdata in
    let context = TransferContext.from(userdata)
    let length = size * count
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    if line == "\r\n" || line == "\n" {
        // End of one response's headers: skip interim (1xx) and followed redirects.
        let isRedirect = (300...399).contains(context.head.status) && context.head["location"] != nil
        if context.head.status >= 200 && !isRedirect && !context.headDelivered {
            try? context.deliverHead()
            if context.failure != nil { return 0 }
        }
    } else {
        context.head.absorb(line: line)
    }
    return length
}

private let writeCallback: haul_data_callback = { data, size, count, userdata in
    let context = TransferContext.from(userdata)
    let length = size * count
    if !context.headDelivered {
        try? context.deliverHead()
    }
    guard context.failure == nil else { return 0 }
    guard context.shouldContinue() else {
        context.failure = HaulError("interrupted", "download was interrupted", transient: true)
        return 0
    }
    do {
        try context.onData(UnsafeRawBufferPointer(start: data, count: length))
    } catch {
        context.failure = error
        return 0
    }
    context.bytes += Int64(length)
    return length
}

private let progressCallback: haul_xferinfo_callback = { userdata, _, _, _, _ in
    TransferContext.from(userdata).shouldContinue() ? 0 : 1
}
