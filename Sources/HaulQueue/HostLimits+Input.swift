import HaulCore
import HaulPostgres

extension HostLimits {
    /// Checks an operator's `HOST[:PORT]` (or `*`) and limit as typed, for `haul host-limit set`
    /// and the dashboard alike. - Throws: a `usage` HaulError saying what is wrong.
    public static func parse(host text: String, limit limitText: String) throws -> (host: String, limit: Int) {
        guard let limit = Int(limitText), limit >= 0 else {
            throw HaulError.usage(
                "the limit '\(limitText)' is not a whole number of 0 or more",
                hint: "give the most segments to run at once against the host, e.g. 4, or 0 to pause it")
        }
        guard limit <= Int(Int32.max) else { throw HaulError.usage("'\(limitText)' is too large a limit", hint: "at most \(Int32.max)") }
        return (try parse(host: text), limit)
    }

    /// Checks an operator's `HOST[:PORT]` (or `*`) as typed, lowercased, and names it as
    /// transfers do (`OriginURL.hostKey`): `a.example:443` is `a.example`.
    /// - Throws: a `usage` HaulError saying what is wrong.
    public static func parse(host text: String) throws -> String {
        let host = text.lowercased()
        guard host == "*" || (!host.isEmpty && !host.containsSlash && !host.contains(" ")) else {
            throw HaulError.usage("'\(text)' is not HOST or HOST:PORT", hint: "write it as it appears in URLs, e.g. mirror.example.org or 10.0.0.5:8080")
        }
        let (name, port) = nameAndPort(host)
        return OriginURL.withPort(name, port)
    }

    /// `host` cut into its name and port: `a.example:8080`, `[2001:db8::1]:8080`; a bare IPv6
    /// literal or a name without a port has none.
    static func nameAndPort(_ host: String) -> (name: String, port: Int?) {
        guard let colon = host.lastIndex(of: ":"), let port = Int(host[host.index(after: colon)...]), port > 0 else { return (host, nil) }
        let name = host[..<colon]
        guard !name.contains(":") || (name.hasPrefix("[") && name.hasSuffix("]")) else { return (host, nil) }
        return (String(name), port)
    }

    /// When no transfer has come from `host` yet, the hosts transfers did come from by the same
    /// name on other ports (none when `host` is known, or is `*`): what an operator who typed
    /// `10.0.0.5` for origins at `10.0.0.5:8080` meant. Read before a limit is set, which
    /// records the host.
    public static func namesakes(_ db: PostgresConnection, of host: String) throws -> [String]? {
        guard host != "*" else { return nil }
        let rows = try db.query(Statements.HostLimits.namesakes, [host, nameAndPort(host).name]).rows.map { try $0.string("host") }
        return rows.contains(host) ? nil : rows
    }

    /// What `namesakes` found, in words, for a limit just set on `host` that no transfer has
    /// come from.
    public static func describeUnknown(host: String, namesakes: [String]) -> String {
        let hint =
            namesakes.isEmpty
            ? "it applies to its transfers when they come; check the spelling (HOST, or HOST:PORT for a port other than 80 or 443)"
            : "transfers came from \(namesakes.joined(separator: ", ")): name one of those to limit them"
        return "note: no transfer has come from \(host) yet; \(hint)"
    }

    /// What setting a limit did, in words.
    public static func describe(host: String, limit: Int) -> String {
        switch (host, limit) {
        case ("*", 0): "default limit: 0, every host without a limit of its own is paused (running segments finish)"
        case ("*", _): "default limit: \(segments(limit)) per host"
        case (_, 0): "\(host): paused, no new segment or probe starts (running segments finish their current one)"
        default: "\(host): at most \(segments(limit))"
        }
    }

    /// `n running segments`, or `1 running segment`.
    public static func segments(_ n: Int) -> String {
        n == 1 ? "1 running segment" : "\(n) running segments"
    }
}
