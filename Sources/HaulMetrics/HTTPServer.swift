import CMicroHTTPD
import Glibc
import HaulCore
import Synchronization

/// One HTTP request as the embedded server hands it to its handler, complete with its body.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path without the query string, as the client sent it (percent-decoding is libmicrohttpd's).
    public var path: String
    /// Query arguments, decoded; an argument named twice keeps its last value.
    public var query: [String: String]
    /// Header fields by lower-cased name.
    public var headers: [String: String]
    /// The body (empty for GET).
    public var body: [UInt8]
    /// The body was larger than the server accepts and was dropped.
    public var bodyTooLarge: Bool
    /// The client's IP address (`127.0.0.1`, `::1`); empty when unknown.
    public var clientAddress: String

    /// A request built in memory (tests, routers).
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = [],
        bodyTooLarge: Bool = false, clientAddress: String = ""
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
        self.bodyTooLarge = bodyTooLarge
        self.clientAddress = clientAddress
    }

    /// A header field by name, any case.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// One complete HTTP response.
public struct HTTPResponse: Sendable, Equatable {
    public var status: UInt32
    /// Header fields in the order they are sent (`Content-Type` included).
    public var headers: [Header]
    public var body: [UInt8]

    /// A response header field.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(status: UInt32, contentType: String, body: String, headers: [Header] = []) {
        self.status = status
        self.headers = [Header("Content-Type", contentType)] + headers
        self.body = Array(body.utf8)
    }

    /// The value of the first header field named `name`, any case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// An embedded HTTP server (libmicrohttpd) that hands each complete request to a handler.
///
/// It listens from `init` until `stop()` (or deinit). libmicrohttpd polls on its own internal
/// thread and answers from a pool of threads of its own: `handler` runs on those threads, never
/// on the caller's or on the Swift concurrency pool, so it must be thread-safe; it may block
/// (on the database, say) for as long as one request may take.
///
/// Slow clients cannot starve it (`ConnectionGuard`): the pool threads poll their connections
/// with epoll and are busy only while a handler runs, so a connection that trickles its
/// request costs a socket, not a thread; a connection must deliver its whole request within
/// `requestDeadlineSeconds`; and when an address, or the server, holds too many connections,
/// the one that has waited longest for its request is closed to make room. So `/healthz`
/// answers at once while dozens of clients trickle headers, even from their own address.
public final class HTTPServer: Sendable {
    /// Where the server listens.
    public let address: MetricsAddress
    private let running: Mutex<Daemon?>

    /// The daemon pointer, its C state and the retained handler box; only touched under `running`.
    private struct Daemon: ~Copyable {
        let pointer: OpaquePointer
        let server: UnsafeMutablePointer<haul_mhd_server>
        let handler: Unmanaged<HandlerBox>
        let watch: SlowClientWatch
    }

    /// How a server is run.
    public struct Limits: Sendable {
        /// Threads that answer requests.
        public var threads: UInt32
        /// Seconds a connection that sends nothing stays open.
        public var idleTimeoutSeconds: UInt32 = 10
        /// Seconds a connection may take to send a whole request (head and body), counted from
        /// its opening or from its previous answer, however steadily it trickles bytes.
        public var requestDeadlineSeconds: Double = 5
        /// Connections open at once; one more closes the one that has waited longest for its request.
        public var connectionLimit: UInt32 = 512
        /// Connections one client address may hold; one more closes the one of that address
        /// that has waited longest for its request (or the newcomer, if all are being answered).
        public var perAddressLimit: UInt32 = 16
        /// Request bodies larger than this are dropped (the handler sees `bodyTooLarge`).
        public var maxBody: Int = 64 * 1024

        public init(threads: UInt32) {
            self.threads = threads
        }
    }

    /// Starts serving on `address`; `option` (such as `--metrics-addr`) and `purpose` (such as
    /// `metrics`) name the address in errors.
    ///
    /// - Throws: `metrics-addr-in-use` when another process listens there, `metrics-addr-unavailable`
    ///   when the address is not this host's or the port needs privileges, `metrics-server` otherwise.
    public init(
        address: MetricsAddress, limits: Limits, option: String = "--metrics-addr", purpose: String = "metrics",
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HaulError) {
        self.address = address
        let watch = SlowClientWatch(
            limits: .init(perAddress: Int(limits.perAddressLimit), total: Int(limits.connectionLimit), requestDeadline: limits.requestDeadlineSeconds))
        guard watch.startSweeping() else {
            throw HaulError(.metricsServer, "cannot serve \(purpose) on \(address.text): no thread could be started", transient: true)
        }
        let box = Unmanaged.passRetained(HandlerBox(handler, watch: watch))
        var server: UnsafeMutablePointer<haul_mhd_server>?
        // libmicrohttpd may hold a few more connections than the guard allows: those being closed.
        let hardLimit = limits.connectionLimit + limits.perAddressLimit
        let pointer = SocketAddress.withSockaddr(address) { sockaddr, _ in
            haul_mhd_start(
                sockaddr, address.family == .ipv6 ? 1 : 0, limits.threads, limits.idleTimeoutSeconds, hardLimit, limits.maxBody,
                httpAccessHandler, httpEvent, box.toOpaque(), &server)
        }
        guard let pointer, let server else {
            watch.stopSweeping()
            box.release()
            throw Self.startFailure(address, option: option, purpose: purpose)
        }
        running = Mutex(Daemon(pointer: pointer, server: server, handler: box, watch: watch))
    }

    deinit {
        stop()
    }

    /// Stops listening, closes open connections and waits for libmicrohttpd's threads to exit.
    /// Safe to call more than once and from any thread except libmicrohttpd's own.
    public func stop() {
        guard let daemon = running.withLock({ $0.take() }) else { return }
        daemon.watch.stopSweeping()
        haul_mhd_stop(daemon.pointer, daemon.server)
        daemon.handler.release()
    }

    /// Why libmicrohttpd could not listen: it does not say, so bind a probe socket the same
    /// way (with SO_REUSEADDR, as libmicrohttpd does) and read its errno.
    private static func startFailure(_ address: MetricsAddress, option: String, purpose: String) -> HaulError {
        let prefix = "cannot serve \(purpose) on \(address.text)"
        switch SocketAddress.probeBind(address) {
        case EADDRINUSE:
            return HaulError(.metricsAddrInUse, "\(prefix): address in use", hint: "choose another \(option)")
        case EADDRNOTAVAIL:
            return HaulError(
                .metricsAddrUnavailable, "\(prefix): no interface of this host has that address",
                hint: "use 127.0.0.1, 0.0.0.0 or one of this host's addresses in \(option)")
        case EACCES:
            return HaulError(
                .metricsAddrUnavailable, "\(prefix): permission denied", hint: "ports below 1024 need privileges; choose a port above 1024")
        case EAFNOSUPPORT:
            return HaulError(.metricsAddrUnavailable, "\(prefix): this host has no IPv6", hint: "use an IPv4 address such as 127.0.0.1 in \(option)")
        case let code?:
            return HaulError(.metricsServer, "\(prefix): \(String(cString: strerror(code)))", hint: "choose another \(option)")
        case nil:
            return HaulError(.metricsServer, "\(prefix): the embedded HTTP server (libmicrohttpd) failed to start", transient: true)
        }
    }
}

/// The handler, boxed so that C can hold a pointer to it.
private final class HandlerBox: Sendable {
    let handle: @Sendable (HTTPRequest) -> HTTPResponse
    let watch: SlowClientWatch
    init(_ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse, watch: SlowClientWatch) {
        self.handle = handle
        self.watch = watch
    }
}

/// The C event callback: hands a connection's event to the server's `SlowClientWatch`.
private func httpEvent(context: UnsafeMutableRawPointer?, kind: Int32, socket: Int32, address: UnsafePointer<sockaddr>?) {
    guard let context else { return }
    Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue().watch.event(kind, socket: socket, address: address)
}

/// Collects header fields or query arguments through libmicrohttpd's iterator.
private final class ValueCollector {
    var values: [String: String] = [:]
}

private func collect(_ connection: OpaquePointer, headers: Bool) -> [String: String] {
    let collector = ValueCollector()
    let iterator: MHD_KeyValueIterator = { context, _, key, value in
        guard let context, let key else { return .YES }
        let collector = Unmanaged<ValueCollector>.fromOpaque(context).takeUnretainedValue()
        collector.values[String(cString: key)] = value.map { String(cString: $0) } ?? ""
        return .YES
    }
    withExtendedLifetime(collector) {
        _ = haul_mhd_values(connection, headers ? 1 : 0, iterator, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.values
}

/// The C handler: runs on one of the daemon's pool threads once a request's body is complete.
private func httpAccessHandler(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
    body: UnsafePointer<CChar>?, length: Int, tooLarge: Int32
) -> MHD_Result {
    guard let context, let connection, let url, let method else { return .NO }
    let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
    let bytes = body.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
    let request = HTTPRequest(
        method: String(cString: method), path: String(cString: url), query: collect(connection, headers: false),
        headers: collect(connection, headers: true), body: bytes, bodyTooLarge: tooLarge != 0,
        clientAddress: SocketAddress.text(haul_mhd_client_address(connection)))
    let response = box.handle(request)
    let names = response.headers.map { strdup($0.name) }
    let values = response.headers.map { strdup($0.value.replacingNewlines()) }
    defer {
        names.forEach { free($0) }
        values.forEach { free($0) }
    }
    let cNames = names.map { UnsafePointer($0) }
    let cValues = values.map { UnsafePointer($0) }
    return response.body.withUnsafeBytes { payload in
        cNames.withUnsafeBufferPointer { namePointers in
            cValues.withUnsafeBufferPointer { valuePointers in
                haul_mhd_respond(
                    connection, response.status, namePointers.baseAddress, valuePointers.baseAddress, response.headers.count, payload.baseAddress,
                    payload.count)
            }
        }
    }
}

extension String {
    /// Header values never carry a line break (response splitting).
    fileprivate func replacingNewlines() -> String {
        String(unicodeScalars.map { $0 == "\r" || $0 == "\n" ? " " : Character($0) })
    }
}
