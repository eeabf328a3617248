import Glibc

/// Slows token guessing per client address (pure; `Dashboard` keeps one under a lock).
///
/// The first `freeFailures` wrong tokens from an address cost nothing (typos); each one after
/// that locks the address out for twice as long as the one before, from half a second up to
/// `maximumLock`, during which its logins and bearer requests are refused unexamined (even
/// with the right token). A right token clears the address's record; a record with no
/// failure for `forgetAfter` seconds is forgotten. Other addresses are never slowed. So 200
/// wrong guesses from one address take at least 0.5 + 1 + … + 16 + 30 × 188 seconds
/// (over 1.5 hours), far above the promised 10 s; `Dashboard` examines a request before
/// recording its failure, so at most one guess per request thread slips into each window.
public struct LoginThrottle: Sendable {
    /// Wrong tokens an address may send before it is slowed.
    public static let freeFailures = 5
    /// The longest lock-out, in seconds.
    public static let maximumLock = 30.0
    /// Seconds without a failure after which an address's record is dropped.
    public static let forgetAfter = 15 * 60.0
    /// Addresses remembered at most; past that, forgettable records go first, then the oldest.
    static let capacity = 10_000

    struct Record: Sendable {
        var failures: Int
        var lastFailure: Double
        var lockedUntil: Double
    }

    private(set) var records: [String: Record] = [:]

    public init() {}

    /// Seconds `address` must still wait before its next try is examined; nil: try now.
    public func wait(_ address: String, now: Double) -> Double? {
        guard let record = records[Self.key(address)], record.lockedUntil > now else { return nil }
        return record.lockedUntil - now
    }

    /// Records a wrong token from `address` at `now`.
    public mutating func failed(_ address: String, now: Double) {
        let key = Self.key(address)
        if records[key] == nil, records.count >= Self.capacity { prune(now: now) }
        var record = records[key] ?? Record(failures: 0, lastFailure: now, lockedUntil: 0)
        if now - record.lastFailure > Self.forgetAfter { record.failures = 0 }
        record.failures += 1
        record.lastFailure = now
        if record.failures > Self.freeFailures {
            record.lockedUntil = now + Self.lock(afterFailures: record.failures)
        }
        records[key] = record
    }

    /// Records the right token from `address`: it starts afresh.
    public mutating func succeeded(_ address: String) {
        records[Self.key(address)] = nil
    }

    /// The lock-out after the `failures`th wrong token in a row (more than `freeFailures`).
    static func lock(afterFailures failures: Int) -> Double {
        let doublings = min(failures - Self.freeFailures - 1, 16)
        return min(0.5 * Double(1 << doublings), maximumLock)
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
        records = records.filter { $0.value.lockedUntil > now || now - $0.value.lastFailure <= Self.forgetAfter }
        if records.count >= Self.capacity, let oldest = records.min(by: { $0.value.lastFailure < $1.value.lastFailure }) {
            records[oldest.key] = nil
        }
    }
}
