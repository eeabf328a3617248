import CCurl
import Foundation
import HaulCore

/// One libcurl easy handle and what it needs while a request runs: the request's header list,
/// its error buffer and the callbacks' context. `HTTPClient` runs it with `curl_easy_perform`,
/// `MultiClient` runs several at once with `curl_multi_perform`. Reusing a handle keeps its
/// connection (and, under a multi handle, the multi's shared connection cache) alive.
final class EasyHandle {
    let pointer: UnsafeMutableRawPointer
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var headers: UnsafeMutablePointer<curl_slist>?
    /// The `CURLOPT_RESOLVE` entry of `pinLocalhost`, if any.
    private var resolve: UnsafeMutablePointer<curl_slist>?
    private var context: TransferContext?
    private var url = ""
    private var lowestSpeed: LowestSpeed?

    init() {
        pointer = curl_easy_init()
        errorBuffer[0] = 0
    }

    deinit {
        curl_slist_free_all(headers)
        curl_slist_free_all(resolve)
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
        if let limit = request.bodyLimit { haul_easy_setopt_off(pointer, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limit.bytes)) }
        context.bodyLimit = request.bodyLimit
        context.addressPolicy = request.addressPolicy
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
        if request.addressPolicy.denyPrivate {
            haul_easy_setopt_pointer(pointer, CURLOPT_OPENSOCKETDATA, unmanaged)
            haul_easy_setopt_opensocket_function(pointer, openSocketCallback)
            pinLocalhost(request.url)
        }
        errorBuffer[0] = 0
    }

    /// Under the address policy, a name that always means this machine (`localhost.`,
    /// `x.localhost`: `AddressPolicy.isLocalhostName`) goes to 127.0.0.1 whatever the resolver
    /// says, so it is refused as that address; a resolver that does not know `localhost.`
    /// would otherwise turn a refusal into a name that cannot be resolved, retried.
    private func pinLocalhost(_ url: String) {
        curl_slist_free_all(resolve)
        resolve = nil
        guard let components = URLComponents(string: url), let host = components.host, AddressPolicy.isLocalhostName(host) else { return }
        let port = components.port ?? (components.scheme?.lowercased() == "https" ? 443 : 80)
        resolve = curl_slist_append(nil, "\(host):\(port):127.0.0.1")
        haul_easy_setopt_slist(pointer, CURLOPT_RESOLVE, resolve)
    }

    /// Ends the request libcurl finished with `code`: the summary, or the error to throw (a
    /// callback's own error first, else the network failure in words).
    func finish(_ code: CURLcode) throws -> HTTPClient.Summary {
        defer { context = nil }
        guard let context else { throw HaulError(.`internal`, "an HTTP request finished that was never started") }
        if let failure = context.failure { throw failure }
        if code == CURLE_COULDNT_CONNECT, let refusal = context.addressRefusal { throw refusal }
        if code == CURLE_FILESIZE_EXCEEDED, let limit = context.bodyLimit { throw limit.error }
        guard code == CURLE_OK else {
            let failed = context.effectiveURL ?? url
            // libcurl's words for its low-speed abort; a connect timeout has the same code.
            if code == CURLE_OPERATION_TIMEDOUT, let lowest = lowestSpeed, String(cString: errorBuffer).hasPrefix("Operation too slow") {
                throw lowest.error(host: OriginURL.hostKey(failed), bytes: context.bytes)
            }
            // After a redirect, the URL that failed is the one to name.
            throw CurlFailure.error(code, detail: String(cString: errorBuffer), url: context.effectiveURL ?? url, bytes: context.bytes)
        }
        if !context.headDelivered {
            try context.deliverHead()
            if let failure = context.failure { throw failure }
        }
        return HTTPClient.Summary(head: context.head, bytes: context.bytes)
    }

    /// The `Location` of a redirect the request just ended with (nothing else went wrong): the
    /// caller follows it with a new request, or `nil`.
    func pendingRedirect(_ code: CURLcode) -> String? {
        guard code == CURLE_OK, let context, context.failure == nil, !context.headDelivered else { return nil }
        return context.redirectLocation
    }

    /// Lets go of a request that will not finish (its multi run was interrupted).
    func abandon() {
        context = nil
    }

    private func configure(_ request: FetchRequest) {
        // Redirects are followed by the callers, hop by hop (FetchRequest.following).
        CurlSetup.common(
            pointer, url: request.url, tls: request.tls, stallSeconds: request.stallTimeout, lowest: request.lowestSpeed, errorBuffer: errorBuffer)
        lowestSpeed = request.lowestSpeed
        haul_easy_setopt_long(pointer, CURLOPT_BUFFERSIZE, 512 * 1024)
        haul_easy_setopt_long(pointer, CURLOPT_NOPROGRESS, 0)
        haul_easy_setopt_long(pointer, CURLOPT_TCP_KEEPALIVE, 1)
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
    /// Header bytes received so far, over every response of this hop (interim 1xx included).
    var headBytes = 0
    /// The body may not grow past this (libcurl before 8.4 checks only an announced length).
    var bodyLimit: BodyLimit?
    /// The `Location` of a redirect answer: its body is skipped and the caller follows it.
    var redirectLocation: String?
    /// Peers this request may connect to.
    var addressPolicy = AddressPolicy.open
    /// Why the policy refused a peer address; the request's error if no other address worked.
    var addressRefusal: HaulError?
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

    /// The most header bytes accepted for one hop of a request: a real head is a
    /// few KiB, and a hostile one must not grow a worker's memory without end.
    static let headLimit = 256 << 10
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
    context.headBytes += length
    guard context.headBytes <= TransferContext.headLimit else {
        context.failure = HaulError(
            .badOrigin, "the origin sent more than \(TransferContext.headLimit >> 10) KiB of response headers", transient: true)
        return 0
    }
    let line = UnsafeRawBufferPointer(start: data, count: length)
    if line.elementsEqual("\r\n".utf8) || line.elementsEqual("\n".utf8) {
        // End of one response's headers: skip interim (1xx) and followed redirects.
        let isRedirect = [301, 302, 303, 307, 308].contains(context.head.status) && context.head["location"] != nil
        if isRedirect && !context.headDelivered {
            context.redirectLocation = context.head["location"]
        } else if context.head.status >= 200 && !context.headDelivered {
            try? context.deliverHead()
            if context.failure != nil { return 0 }
        }
    } else {
        context.head.absorb(bytes: line)
    }
    return length
}

private let writeCallback: haul_data_callback = { data, size, count, userdata in
    let context = TransferContext.from(userdata)
    let length = size * count
    if context.redirectLocation != nil { return length }  // a redirect's body
    if !context.headDelivered {
        try? context.deliverHead()
    }
    guard context.failure == nil else { return 0 }
    if let limit = context.bodyLimit, context.bytes + Int64(length) > limit.bytes {
        context.failure = limit.error
        return 0
    }
    guard context.shouldContinue() else {
        context.failure = HaulError(.interrupted, "download was interrupted", transient: true)
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

/// Opens the socket libcurl asks for unless the request's address policy refuses the peer
/// (after DNS resolution, for every connection, redirects included).
private let openSocketCallback: haul_opensocket_callback = { userdata, _, address in
    guard let address else { return haul_socket_bad() }
    let context = TransferContext.from(userdata)
    var bytes = [UInt8](repeating: 0, count: 16)
    let count = Int(haul_sockaddr_bytes(address, &bytes))
    if count > 0, let why = context.addressPolicy.refusal(Array(bytes.prefix(count))) {
        context.addressRefusal = HaulError(
            .addressRefused, "the address policy refused to connect: \(why)",
            hint:
                "haul runs with --deny-private-addresses (or HAUL_DENY_PRIVATE_ADDRESSES=1); add the network with --allow-network if it is meant to be reached")
        return haul_socket_bad()
    }
    return socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
}

private let progressCallback: haul_xferinfo_callback = { userdata, _, _, _, _ in
    TransferContext.from(userdata).shouldContinue() ? 0 : 1
}
