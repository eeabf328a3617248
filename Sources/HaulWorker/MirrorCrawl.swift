import HaulCore

/// The rule that tells a mirror that crawls: an attempt that, after `window` seconds (the
/// lowest-speed time), has come at under a tenth of `peerRate` (the slowest rate the other
/// healthy mirrors' last attempts served at) is given up as `too-slow`, a failure of its mirror,
/// so that the others take its segments. Pure.
struct MirrorCrawl {
    /// How many times slower than its peers an attempt may be.
    static let factor: Int64 = 10
    /// Bytes per second of the slowest other healthy mirror.
    let peerRate: Int64
    /// Seconds an attempt runs before it is judged.
    let window: Double

    /// Throws `too-slow` when `received` bytes in `seconds` are a crawl.
    func judge(received: Int64, seconds: Double, host: String) throws {
        guard seconds >= window, seconds > 0 else { return }
        let rate = Int64(Double(received) / seconds)
        guard rate * Self.factor < peerRate else { return }
        throw HaulError(
            .tooSlow,
            "mirror \(host) sent \(ByteSize.format(rate))/s for \(Int(seconds)) s, under a tenth of the \(ByteSize.format(peerRate))/s of the other mirrors",
            hint: "the other mirrors fetch its segments; it is tried again later", transient: true)
    }
}
