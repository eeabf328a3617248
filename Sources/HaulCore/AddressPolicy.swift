import Foundation

/// Which peer addresses a worker may connect to: with `denyPrivate`, none of loopback,
/// link-local, private, shared (CGNAT), multicast or reserved ranges, IPv4 or IPv6 (IPv4-mapped,
/// -compatible, NAT64, 6to4 and Teredo addresses are judged by the IPv4 addresses inside; the
/// local-use NAT64 prefix `64:ff9b:1::/48` is refused whole), unless a network in `allowed`
/// contains it. Checked on the resolved address of every connection, redirects included, so a
/// public name resolving to 10.0.0.5 or a redirect to http://169.254.169.254/ is refused alike.
public struct AddressPolicy: Sendable, Equatable {
    /// Refuse non-public addresses.
    public var denyPrivate: Bool
    /// Networks allowed even so (an internal mirror, say).
    public var allowed: [Network]

    /// No restriction.
    public static let open = AddressPolicy(denyPrivate: false, allowed: [])

    /// A policy.
    public init(denyPrivate: Bool, allowed: [Network] = []) {
        self.denyPrivate = denyPrivate
        self.allowed = allowed
    }

    /// An IP network such as `10.0.0.0/8` or `fd00::/8`.
    public struct Network: Sendable, Equatable, CustomStringConvertible {
        /// 4 or 16 bytes.
        public let bytes: [UInt8]
        /// Leading bits that must match.
        public let prefix: Int

        /// Parses `ADDRESS/PREFIX` or a bare address (one host); throws a usage error naming `flag`.
        public init(parsing text: String, flag: String = "--allow-network") throws {
            let parts = text.trimmingWhitespace().split(separator: "/", maxSplits: 1).map(String.init)
            guard let first = parts.first, let bytes = AddressPolicy.parse(first) else {
                throw HaulError.usage("\(flag) '\(text)' is not an IP network", hint: "write it as 10.1.2.0/24, 192.0.2.7 or fd00::/8")
            }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...(bytes.count * 8)).contains(prefix) else {
                throw HaulError.usage("\(flag) '\(text)' has an invalid prefix length", hint: "IPv4 prefixes are 0 to 32, IPv6 0 to 128")
            }
            self.bytes = bytes
            self.prefix = prefix
        }

        /// Whether `address` (4 or 16 bytes) lies in this network.
        public func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            for bit in 0..<prefix {
                let mask = UInt8(0x80) >> UInt8(bit % 8)
                if address[bit / 8] & mask != bytes[bit / 8] & mask { return false }
            }
            return true
        }

        public var description: String { "\(AddressPolicy.format(bytes))/\(prefix)" }
    }

    /// Why `address` (4 or 16 bytes) is refused, or `nil` when it is allowed.
    public func refusal(_ address: [UInt8]) -> String? {
        guard denyPrivate, !allowed.contains(where: { $0.contains(address) }) else { return nil }
        guard let range = Self.nonPublicRange(address) else { return nil }
        return "\(Self.format(address)) is \(range)"
    }

    /// The kind of non-public range holding `address`, or `nil` for a public address. An IPv6
    /// address that carries an IPv4 one (``embeddedIPv4(_:)``) is judged by the IPv4 address too.
    public static func nonPublicRange(_ address: [UInt8]) -> String? {
        if address.count == 16 {
            for (inner, form) in embeddedIPv4(address) {
                guard let range = nonPublicRange(inner) else { continue }
                return "\(range) (\(format(inner)) in \(form) form)"
            }
            for (network, name) in ipv6Ranges where network.contains(address) { return name }
            return nil
        }
        for (network, name) in ipv4Ranges where network.contains(address) { return name }
        return nil
    }

    /// The IPv4 addresses an IPv6 address carries, each with the form's name: IPv4-mapped
    /// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`), 6to4
    /// (`2002:AABB:CCDD::/48`, bits 16-47) and Teredo (`2001:0:SSSS:SSSS::/32`: the server at
    /// bits 32-63, the client in the last 32 bits with every bit flipped). Packets to any of
    /// them may end up at that IPv4 address, so a non-public one refuses the IPv6 address.
    static func embeddedIPv4(_ address: [UInt8]) -> [(address: [UInt8], form: String)] {
        let head = Array(address[0..<12])
        let last = Array(address[12..<16])
        if head == Array(repeating: 0, count: 10) + [0xff, 0xff] { return [(last, "IPv4-mapped")] }
        if head == [0, 0x64, 0xff, 0x9b] + Array(repeating: 0, count: 8) { return [(last, "NAT64")] }
        if head == Array(repeating: 0, count: 12) && last != [0, 0, 0, 0] && last != [0, 0, 0, 1] { return [(last, "IPv4-compatible")] }
        if address[0] == 0x20 && address[1] == 0x02 { return [(Array(address[2..<6]), "6to4")] }
        if address[0..<4] == [0x20, 0x01, 0, 0] {
            return [(Array(address[4..<8]), "Teredo server"), (last.map { $0 ^ 0xff }, "Teredo client")]
        }
        return []
    }

    private static let ipv4Ranges: [(Network, String)] = [
        ("0.0.0.0/8", "a 'this network' address"), ("10.0.0.0/8", "a private address"), ("100.64.0.0/10", "a shared (CGNAT) address"),
        ("127.0.0.0/8", "a loopback address"), ("169.254.0.0/16", "a link-local address"), ("172.16.0.0/12", "a private address"),
        ("192.0.0.0/24", "an IETF protocol address"), ("192.168.0.0/16", "a private address"), ("198.18.0.0/15", "a benchmarking address"),
        ("224.0.0.0/4", "a multicast address"), ("240.0.0.0/4", "a reserved address"),
    ].map { (try! Network(parsing: $0.0), $0.1) }

    private static let ipv6Ranges: [(Network, String)] = [
        ("::/128", "the unspecified address"), ("::1/128", "a loopback address"), ("fc00::/7", "a unique local (private) address"),
        ("fe80::/10", "a link-local address"), ("fec0::/10", "a site-local address"), ("ff00::/8", "a multicast address"),
        // Local-use NAT64 (RFC 8215): where the IPv4 address sits depends on the network's own
        // prefix length, so the whole prefix is refused.
        ("64:ff9b:1::/48", "a local-use NAT64 address"),
    ].map { (try! Network(parsing: $0.0), $0.1) }

    /// Whether `host` is a name that always means this machine (RFC 6761): `localhost` or a name
    /// under it, in any case, with or without the final dot (`localhost.`, `a.localhost`).
    public static func isLocalhostName(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name == "localhost" || name.hasSuffix(".localhost")
    }

    /// The bytes of a textual IPv4 or IPv6 address.
    public static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// The textual form of 4 or 16 address bytes.
    public static func format(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) } != nil
        guard ok else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
