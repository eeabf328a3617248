import Glibc

/// Slows token guessing per client address (pure; `Dashboard` keeps one under a lock).
///
/// The first `freeFailures` wrong tokens from an address cost nothing (typos). After that, a
/// token from the address is examined no sooner than `delay` after its last wrong one: the
/// dashboard holds the request until then and examines it, so the right token still works,
/// only later. One request per slowed address is held or examined at a time; another that
/// arrives meanwhile is answered 429 unexamined, so parallel connections gain nothing. A
/// client thus tries at most 1 / `delay` tokens a second: 200 wrong guesses take at least
/// 19.5 s (0.1 s for each after the fifth), where there was no limit at all before. A right
/// token clears the address's record; a record with no failure for `forgetAfter` seconds is
/// forgotten. Other addresses are never slowed.
public struct LoginThrottle: Sendable {
    /// Wrong tokens an address may send before it is slowed.
    public static let freeFailures = 5
    /// Seconds between a slowed address's wrong token and the examination of its next one.
    public static let delay = 0.1
    /// Seconds without a failure after which an address's record is dropped.
    public static let forgetAfter = 15 * 60.0
    /// Seconds after which a held request that never reported its outcome no longer blocks.
    static let heldTimeout = 10.0
    /// Addresses remembered at most; past that, forgettable records go first, then the oldest.
    static let capacity = 10_000

    struct Record: Sendable {
        var failures: Int
        var lastFailure: Double
        /// When the request being held or examined was admitted, if one is.
        var held: Double?
    }

    /// What to do with a token an address sent.
    public enum Admission: Sendable, Equatable {
        /// Examine it now.
        case now
        /// Hold the request this many seconds, then examine it.
        case after(Double)
        /// Refuse it unexamined: another token of the address is being held or examined.
        case busy
    }

    private(set) var records: [String: Record] = [:]

    public init() {}

    /// Admits a token from `address` at `now`. A slowed address's admitted token (`now` or
    /// `after`) must be followed by `failed` or `succeeded`, which let the next one in.
    public mutating func admit(_ address: String, now: Double) -> Admission {
        let key = Self.key(address)
        guard var record = records[key], record.failures >= Self.freeFailures, now - record.lastFailure <= Self.forgetAfter else { return .now }
        if let held = record.held, now - held < Self.heldTimeout { return .busy }
        record.held = now
        records[key] = record
        let wait = record.lastFailure + Self.delay - now
        return wait > 0 ? .after(wait) : .now
    }

    /// Records a wrong token from `address` at `now`.
    public mutating func failed(_ address: String, now: Double) {
        let key = Self.key(address)
        if records[key] == nil, records.count >= Self.capacity { prune(now: now) }
        var record = records[key] ?? Record(failures: 0, lastFailure: now)
        if now - record.lastFailure > Self.forgetAfter { record.failures = 0 }
        record.failures += 1
        record.lastFailure = now
        record.held = nil
        records[key] = record
    }

    /// Records the right token from `address`: it starts afresh.
    public mutating func succeeded(_ address: String) {
        records[Self.key(address)] = nil
    }

    /// Whose failures count together: the address itself, or for IPv6 its /64 network
    /// (one host usually holds a whole /64, so single addresses would cost it nothing).
    static func key(_ address: String) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard address.contains(":"), inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
        if mapped { return bytes[12...].map(String.init).joined(separator: ".") }
        return bytes[0..<8].map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
    }

    private mutating func prune(now: Double) {
        records = records.filter { $0.value.held != nil || now - $0.value.lastFailure <= Self.forgetAfter }
        if records.count >= Self.capacity, let oldest = records.min(by: { $0.value.lastFailure < $1.value.lastFailure }) {
            records[oldest.key] = nil
        }
    }
}
