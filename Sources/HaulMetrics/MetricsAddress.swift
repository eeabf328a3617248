import Glibc
import HaulCore

/// Where the metrics endpoint listens: a `--metrics-addr` value parsed and checked.
///
/// Accepted forms: `IPV4:PORT` (`127.0.0.1:9464`, `0.0.0.0:9464`), `localhost:PORT` (always
/// 127.0.0.1, never resolved), and `[IPV6]:PORT` (`[::1]:9464`). The port is 1–65535.
/// Host names other than `localhost` are refused so that the bind address is never a guess.
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address family of `bytes`.
    public enum Family: Sendable, Equatable {
        case ipv4, ipv6
    }

    /// IPv4 or IPv6.
    public let family: Family
    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]
    /// The TCP port, 1–65535.
    public let port: UInt16
    /// The text the address was parsed from, used in messages.
    public let text: String

    /// The text it was parsed from, such as `127.0.0.1:9464`.
    public var description: String { text }

    /// Whether only this host can reach the address (127.0.0.0/8 or ::1).
    public var isLoopback: Bool {
        switch family {
        case .ipv4: return bytes.first == 127
        case .ipv6: return bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    /// Parses `HOST:PORT`; throws a `usage` HaulError saying what is wrong and what a valid
    /// value looks like. `option` and `port` name the flag and an example port in that message.
    public static func parse(_ text: String, option: String = "--metrics-addr", port examplePort: Int = 9464) throws(HaulError) -> MetricsAddress {
        func invalid(_ why: String) -> HaulError {
            .usage(
                "invalid \(option) '\(text)': \(why)",
                hint: "use HOST:PORT such as 127.0.0.1:\(examplePort), 0.0.0.0:\(examplePort) or [::1]:\(examplePort)")
        }
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid("missing ']' after the IPv6 address") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.first == ":" else { throw invalid("missing ':PORT' after ']'") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw invalid("missing ':PORT'") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { throw invalid("an IPv6 address must be written in brackets, as [::1]:\(examplePort)") }
        }
        guard let port = parsePort(portText) else { throw invalid("the port must be a number from 1 to 65535") }
        if host.isEmpty { throw invalid("missing host (write 0.0.0.0:\(portText) to listen on every interface)") }
        if text.hasPrefix("[") {
            guard let bytes = parseIPv6(String(host)) else { throw invalid("'\(host)' is not an IPv6 address") }
            return MetricsAddress(family: .ipv6, bytes: bytes, port: port, text: text)
        }
        if host == "localhost" { return MetricsAddress(family: .ipv4, bytes: [127, 0, 0, 1], port: port, text: text) }
        guard let bytes = parseIPv4(host) else {
            throw invalid("'\(host)' is not an IPv4 address or localhost (host names are not resolved)")
        }
        return MetricsAddress(family: .ipv4, bytes: bytes, port: port, text: text)
    }

    /// Decimal digits only, no sign, 1–65535.
    static func parsePort(_ text: Substring) -> UInt16? {
        guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ (48...57).contains($0) }),
            let value = Int(text), (1...65535).contains(value)
        else { return nil }
        return UInt16(value)
    }

    /// Dotted quad of decimal octets 0–255 without leading zeros (which some tools read as octal).
    static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
            if part.count > 1 && part.hasPrefix("0") { return nil }
            guard let value = Int(part), value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return bytes
    }

    /// An IPv6 literal without zone, as `inet_pton` reads it.
    static func parseIPv6(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }
}
