import HaulCore
import HaulQueue

/// The planner's check that the probed mirror serves the size a Metalink gives: the pieces and
/// the other mirrors are held to that size. Pure.
enum MirrorSizes {
    /// Throws `size-mismatch` when `size` (`nil`: not known), served by `url` (the mirror
    /// probed; `nil`: the transfer's own URL), is not the size `info` expects.
    static func check(_ size: Int64?, of info: TransferInfo, from url: String? = nil) throws {
        guard let expected = info.options.expectedSize, size != expected else { return }
        throw HaulError(
            .sizeMismatch,
            "\(OriginURL.hostKey(url ?? info.url)) serves \(size.map { "\($0) bytes" } ?? "a body of unknown length"), but the Metalink says \(expected)",
            hint: "the mirror holds another version of the file: put a mirror that agrees first, or get a current Metalink")
    }
}
