import HaulCore

/// The lowest-speed rule (`--lowest-speed RATE`, `--lowest-speed-time DURATION`, as aria2's
/// `--lowest-speed-limit` and curl's `--speed-limit`/`--speed-time`): a request whose body comes
/// slower than `bytesPerSecond` for `seconds` is aborted as a transient failure, so an origin
/// that trickles cannot keep a lane. Its bytes are kept; the segment is retried later.
public struct LowestSpeed: Sendable, Equatable {
    /// The speed under which a request is too slow.
    public let bytesPerSecond: Int64
    /// How long it may stay under that speed.
    public let seconds: Int

    /// 1 KiB/s over 30 s, the default of `worker` and `get`.
    public static let standard = LowestSpeed(bytesPerSecond: 1024, seconds: 30)!

    /// The rule, or `nil` (off) when either figure is 0.
    public init?(bytesPerSecond: Int64, seconds: Int) {
        guard bytesPerSecond > 0, seconds > 0 else { return nil }
        self.bytesPerSecond = bytesPerSecond
        self.seconds = seconds
    }

    /// The rule for one transfer: its own figures (`enqueue --lowest-speed`, `--lowest-speed-time`)
    /// where it has them, else its worker's (`worker`, `nil` when the worker's rule is off), else
    /// the standard ones; `nil` (off) when the figures in force are 0, or when neither the
    /// transfer nor the worker has a rule.
    public static func forTransfer(worker: LowestSpeed?, bytesPerSecond: Int64?, seconds: Int?) -> LowestSpeed? {
        guard bytesPerSecond != nil || seconds != nil else { return worker }
        let base = worker ?? standard
        return LowestSpeed(bytesPerSecond: bytesPerSecond ?? base.bytesPerSecond, seconds: seconds ?? base.seconds)
    }

    /// The error of a request to origin `host` that was too slow after `bytes` body bytes.
    public func error(host: String, bytes: Int64) -> HaulError {
        HaulError(
            .tooSlow,
            "origin \(host) sent under \(ByteSize.format(bytesPerSecond))/s for \(seconds) s (after \(bytes) bytes); its lane was given back",
            hint: "a slow origin may need a lower --lowest-speed (0 turns the rule off)", transient: true)
    }
}
