import HaulCore

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

    /// Checks an operator's `HOST[:PORT]` (or `*`) as typed, lowercased.
    /// - Throws: a `usage` HaulError saying what is wrong.
    public static func parse(host text: String) throws -> String {
        let host = text.lowercased()
        guard host == "*" || (!host.isEmpty && !host.containsSlash && !host.contains(" ")) else {
            throw HaulError.usage("'\(text)' is not HOST or HOST:PORT", hint: "write it as it appears in URLs, e.g. mirror.example.org or 10.0.0.5:8080")
        }
        return host
    }

    /// What setting a limit did, in words.
    public static func describe(host: String, limit: Int) -> String {
        switch (host, limit) {
        case ("*", 0): "default limit: 0, every host without a limit of its own is paused (running segments finish)"
        case ("*", _): "default limit: \(limit) running segments per host"
        case (_, 0): "\(host): paused, no new segment or probe starts (running segments finish their current one)"
        default: "\(host): at most \(limit) running segments"
        }
    }
}
