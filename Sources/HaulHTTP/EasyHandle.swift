import CCurl
import HaulCore

/// One libcurl easy handle and what it needs while a request runs: the request's header list,
/// its error buffer and the callbacks' context. `HTTPClient` runs it with `curl_easy_perform`,
/// `MultiClient` runs several at once with `curl_multi_perform`. Reusing a handle keeps its
/// connection (and, under a multi handle, the multi's shared connection cache) alive.
final class EasyHandle {
    let pointer: UnsafeMutableRawPointer
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var headers: UnsafeMutablePointer<curl_slist>?
    private var context: TransferContext?
    private var url = ""

    init() {
        pointer = curl_easy_init()
        errorBuffer[0] = 0
    }

    deinit {
        curl_slist_free_all(headers)
        curl_easy_cleanup(pointer)
        errorBuffer.deallocate()
    }

    /// Sets the handle up for `request`; the callbacks reach `context` until `finish`.
    func prepare(_ request: FetchRequest, context: TransferContext) {
        curl_easy_reset(pointer)
        curl_slist_free_all(headers)
        headers = nil
        for line in request.headerLines { headers = curl_slist_append(headers, line) }
        if let ifRange = request.ifRange { headers = curl_slist_append(headers, "If-Range: \(ifRange)") }
        configure(request)
        haul_easy_setopt_slist(pointer, CURLOPT_HTTPHEADER, headers)
        if let range = request.rangeValue?.dropFirst("bytes=".count) {
            haul_easy_setopt_string(pointer, CURLOPT_RANGE, String(range))
        }
        self.context = context
        context.handle = pointer
        url = request.url
        let unmanaged = Unmanaged.passUnretained(context).toOpaque()
        haul_easy_setopt_pointer(pointer, CURLOPT_WRITEDATA, unmanaged)
        haul_easy_setopt_pointer(pointer, CURLOPT_HEADERDATA, unmanaged)
        haul_easy_setopt_pointer(pointer, CURLOPT_XFERINFODATA, unmanaged)
        haul_easy_setopt_write_function(pointer, writeCallback)
        haul_easy_setopt_header_function(pointer, headerCallback)
        haul_easy_setopt_xferinfo_function(pointer, progressCallback)
        errorBuffer[0] = 0
        haul_easy_setopt_pointer(pointer, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    /// Ends the request libcurl finished with `code`: the summary, or the error to throw (a
    /// callback's own error first, else the network failure in words).
    func finish(_ code: CURLcode) throws -> HTTPClient.Summary {
        defer { context = nil }
        guard let context else { throw HaulError("internal", "an HTTP request finished that was never started") }
        if let failure = context.failure { throw failure }
        guard code == CURLE_OK else {
            // After a redirect, the URL that failed is the one to name.
            throw CurlFailure.error(code, detail: String(cString: errorBuffer), url: context.effectiveURL ?? url, bytes: context.bytes)
        }
        if !context.headDelivered {
            try context.deliverHead()
            if let failure = context.failure { throw failure }
        }
        return HTTPClient.Summary(head: context.head, bytes: context.bytes)
    }

    /// Lets go of a request that will not finish (its multi run was interrupted).
    func abandon() {
        context = nil
    }

    private func configure(_ request: FetchRequest) {
        haul_easy_setopt_string(pointer, CURLOPT_URL, request.url)
        haul_easy_setopt_long(pointer, CURLOPT_NOSIGNAL, 1)
        haul_easy_setopt_long(pointer, CURLOPT_FOLLOWLOCATION, 1)
        haul_easy_setopt_long(pointer, CURLOPT_MAXREDIRS, 10)
        haul_easy_setopt_string(pointer, CURLOPT_PROTOCOLS_STR, "http,https")
        haul_easy_setopt_string(pointer, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        haul_easy_setopt_string(pointer, CURLOPT_USERAGENT, Curl.userAgent)
        haul_easy_setopt_long(pointer, CURLOPT_BUFFERSIZE, 512 * 1024)
        haul_easy_setopt_long(pointer, CURLOPT_CONNECTTIMEOUT, 30)
        haul_easy_setopt_long(pointer, CURLOPT_LOW_SPEED_LIMIT, 1)
        haul_easy_setopt_long(pointer, CURLOPT_LOW_SPEED_TIME, request.stallTimeout)
        haul_easy_setopt_long(pointer, CURLOPT_NOPROGRESS, 0)
        haul_easy_setopt_long(pointer, CURLOPT_TCP_KEEPALIVE, 1)
        if let bundle = request.tls.caBundle { haul_easy_setopt_string(pointer, CURLOPT_CAINFO, bundle) }
        if request.tls.insecure {
            haul_easy_setopt_long(pointer, CURLOPT_SSL_VERIFYPEER, 0)
            haul_easy_setopt_long(pointer, CURLOPT_SSL_VERIFYHOST, 0)
        }
    }
}

/// The state libcurl's C callbacks reach through their `userdata` pointer during one request.
final class TransferContext {
    let onHead: (ResponseHead) throws -> Void
    let onData: (UnsafeRawBufferPointer) throws -> Void
    let shouldContinue: () -> Bool
    var head = ResponseHead(status: 0)
    var headDelivered = false
    var bytes: Int64 = 0
    var failure: Error?
    /// The easy handle running this request, for asking libcurl where redirects led.
    var handle: UnsafeMutableRawPointer?

    init(onHead: @escaping (ResponseHead) throws -> Void, onData: @escaping (UnsafeRawBufferPointer) throws -> Void, shouldContinue: @escaping () -> Bool) {
        self.onHead = onHead
        self.onData = onData
        self.shouldContinue = shouldContinue
    }

    func deliverHead() throws {
        headDelivered = true
        head.url = effectiveURL
        do { try onHead(head) } catch { failure = error }
    }

    /// The URL libcurl last requested (after redirects).
    var effectiveURL: String? {
        guard let handle else { return nil }
        var value: UnsafeMutablePointer<CChar>?
        guard haul_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
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
