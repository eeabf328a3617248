import CCurl
import Foundation
import HaulCore

/// A reusable libcurl easy handle for GETs. Blocking: one thread owns it at a time and it is
/// not `Sendable`. Reusing it across requests keeps the connection to an origin alive.
public final class HTTPClient {
    private let easy = EasyHandle()

    /// Creates a handle. `Curl.initialize()` must have run.
    public init() {}

    /// What a completed request returned.
    public struct Summary: Sendable {
        /// The final response's head.
        public let head: ResponseHead
        /// Body bytes delivered to `onData`.
        public let bytes: Int64
    }

    /// Runs one GET. Blocks until the body ends, a callback throws, or `shouldContinue` says stop.
    /// - Parameters:
    ///   - onHead: called once with the final response's head, before any body byte; throw to refuse the body.
    ///   - onData: called with each received chunk (valid only during the call); throw to abort.
    ///   - shouldContinue: polled about once a second and on each chunk; `false` aborts with `interrupted`.
    /// - Throws: the callbacks' errors unchanged, or a `HaulError` describing the network failure.
    @discardableResult
    public func fetch(
        _ request: FetchRequest,
        onHead: (ResponseHead) throws -> Void,
        onData: (UnsafeRawBufferPointer) throws -> Void,
        shouldContinue: () -> Bool = { true }
    ) throws -> Summary {
        try withoutActuallyEscaping(onHead) { onHead in
            try withoutActuallyEscaping(onData) { onData in
                try withoutActuallyEscaping(shouldContinue) { shouldContinue in
                    // The context lives only for one hop: `finish` or `abandon` lets go of it.
                    let paced: (UnsafeRawBufferPointer) throws -> Void = { bytes in
                        try onData(bytes)
                        request.pacer?.pace(bytes.count)
                    }
                    var current = request
                    var hop = 0
                    while true {
                        easy.prepare(current, context: TransferContext(onHead: onHead, onData: paced, shouldContinue: shouldContinue))
                        let code = curl_easy_perform(easy.pointer)
                        guard let location = easy.pendingRedirect(code) else { return try easy.finish(code) }
                        easy.abandon()
                        hop += 1
                        current = try current.following(location, hop: hop)
                    }
                }
            }
        }
    }
}
