import Glibc

/// `struct sockaddr_in` / `sockaddr_in6` for a `MetricsAddress`, and the bind probe that
/// explains why libmicrohttpd could not listen.
enum SocketAddress {
    /// Calls `body` with a pointer to the socket address, valid only during the call.
    static func withSockaddr<R>(_ address: MetricsAddress, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        switch address.family {
        case .ipv4:
            var storage = sockaddr_in()
            storage.sin_family = sa_family_t(AF_INET)
            storage.sin_port = address.port.bigEndian
            withUnsafeMutableBytes(of: &storage.sin_addr) { $0.copyBytes(from: address.bytes) }
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .ipv6:
            var storage = sockaddr_in6()
            storage.sin6_family = sa_family_t(AF_INET6)
            storage.sin6_port = address.port.bigEndian
            withUnsafeMutableBytes(of: &storage.sin6_addr) { $0.copyBytes(from: address.bytes) }
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    /// The IP address in `address` (`sockaddr_in` or `sockaddr_in6`) as text; empty for nil or another family.
    static func text(_ address: UnsafePointer<sockaddr>?) -> String {
        guard let address else { return "" }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = Int32(address.pointee.sa_family)
        let written: UnsafePointer<CChar>? =
            switch family {
            case AF_INET:
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet_ntop(AF_INET, [$0.pointee.sin_addr], &buffer, socklen_t(buffer.count)) }
            case AF_INET6:
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet_ntop(AF_INET6, [$0.pointee.sin6_addr], &buffer, socklen_t(buffer.count)) }
            default: nil
            }
        return written == nil ? "" : String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Binds and closes a TCP socket on `address`; returns the errno of the step that
    /// failed, or nil when binding works.
    static func probeBind(_ address: MetricsAddress) -> Int32? {
        let stream = Int32(SOCK_STREAM.rawValue)
        let fd = socket(address.family == .ipv6 ? AF_INET6 : AF_INET, stream, 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = withSockaddr(address) { bind(fd, $0, $1) }
        return result == 0 ? nil : errno
    }
}
