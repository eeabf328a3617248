import Dispatch
import HaulCore
import HaulPostgres
import HaulQueue

/// One attempt at a segment of a transfer with mirrors or piece digests: the mirror it fetches
/// from, the check of each piece as its last byte arrives, and what the mirror's row learns of
/// the attempt. Integrity across mirrors comes from the digests, never from one mirror's
/// validators: a segment on another mirror than the probed one pins only the size.
/// Owned by one role thread for one attempt.
final class MirrorRoute {
    /// The segment, its resume point moved back to the start of its piece.
    let segment: ClaimedSegment
    /// The mirror's place in priority order; 0 is the transfer's own URL.
    let mirror: Int
    /// The URL this attempt fetches.
    let url: String
    private var check: PieceCheck?
    /// Bytes this attempt received.
    private var received: Int64 = 0
    /// Where to cut the segment's progress back to after a bad piece (its first byte, from the segment's start).
    private var badPieceStart: Int64?
    /// The rule that tells a crawl, once `begin` knows the other mirrors' rates.
    private var crawl: MirrorCrawl?
    /// When the attempt began (uptime nanoseconds).
    private var started: UInt64 = 0
    /// When `feed` next compares the attempt's rate (uptime nanoseconds).
    private var nextJudgement: UInt64 = 0

    /// The route of `segment`, or `nil` when its transfer has neither mirrors nor pieces.
    init?(_ segment: ClaimedSegment) {
        let info = segment.transfer
        guard info.mirrored || info.pieceLength != nil else { return nil }
        var aligned = segment
        if let length = info.pieceLength { aligned.bytesDone -= (segment.offset + segment.bytesDone) % length }
        self.segment = aligned
        mirror = segment.mirror ?? 0
        url = segment.mirrorURL ?? info.url
    }

    /// Whether this attempt's validators may be checked against the planner's probe: it
    /// fetches from the mirror that answered the probe.
    var pinsValidators: Bool { mirror == (segment.transfer.options.probedMirror ?? 0) }

    /// Runs `check` of a response head. On a mirror other than the probed one, a size other
    /// than the file's is that mirror's fault, not a change of the file: the mirror is demoted
    /// (`size-mismatch`) instead of the transfer starting over.
    func validate(_ check: () throws -> Void) throws {
        do {
            try check()
        } catch let error as HaulError where error.code == .originChanged && !pinsValidators {
            throw HaulError(
                .sizeMismatch, "mirror \(OriginURL.hostKey(url)) serves another version of the file: \(error.message)",
                hint: "the mirror is demoted; the others fetch its segments")
        }
    }

    /// Before the attempt: puts the transfer's mirrors whose rest is over on trial, learns the
    /// other mirrors' rates (`MirrorCrawl`, judged after `window` seconds, the lowest-speed
    /// time; `nil`: never judged), and loads the digests of the pieces the rest of the segment
    /// covers, from `first` (a piece start).
    func begin(first: Int64, window: Int?, _ db: PostgresConnection) throws {
        let info = segment.transfer
        started = DispatchTime.now().uptimeNanoseconds
        if info.mirrored {
            let row = try db.query(Statements.MirrorRoute.wake, [info.id, mirror]).first
            if let window, let peers = row?["peers"].flatMap({ Int64($0) }) {
                crawl = MirrorCrawl(peerRate: peers, window: Double(window))
                nextJudgement = started + UInt64(window) * 1_000_000_000
            }
        }
        guard let length = info.pieceLength, let algorithm = info.pieceAlgorithm, let size = info.size else { return }
        let end = segment.lastByte.map { $0 + 1 } ?? size
        guard end > first else { return }
        let firstPiece = first / length
        let lastPiece = (end - 1) / length
        let text = try db.query(
            Statements.MirrorRoute.pieceHashes, [info.id, firstPiece + 1, lastPiece + 1]
        ).first?["hashes"]
        let hashes = (text ?? "").trimmingCharacters(in: ["{", "}"]).split(separator: ",").map(String.init)
        guard hashes.count == Int(lastPiece - firstPiece + 1) else {
            throw HaulError(.`internal`, "transfer \(info.id) holds \(hashes.count) digests for pieces \(firstPiece)...\(lastPiece)")
        }
        check = PieceCheck(algorithm: algorithm, pieceLength: length, fileSize: size, start: first, hashes: hashes)
    }

    /// Checks `bytes` as they arrive. - Throws: `checksum-mismatch` (transient: another mirror
    /// fetches the piece again) when a piece ends with the wrong digest.
    /// - Throws: `too-slow` (transient) when the attempt crawls (`MirrorCrawl`).
    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        received += Int64(bytes.count)
        if let crawl {
            let now = DispatchTime.now().uptimeNanoseconds
            if now >= nextJudgement {
                nextJudgement = now + 1_000_000_000
                try crawl.judge(received: received, seconds: Double(now - started) / 1e9, host: OriginURL.hostKey(url))
            }
        }
        guard let check else { return }
        if let bad = check.feed(bytes) {
            badPieceStart = bad.offset - segment.offset
            throw HaulError(
                .checksumMismatch, "piece \(bad.index) from \(OriginURL.hostKey(url)) has the wrong \(check.algorithm.rawValue) digest",
                hint: "the mirror is demoted and the piece fetched again from another", transient: true)
        }
    }

    /// Adds what the attempt brought to its mirror, with its rate; a mirror on trial is healthy again.
    func succeeded(_ db: PostgresConnection) throws {
        guard segment.transfer.mirrored else { return }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        // No rate from a tail of a few bytes, which tells only the round trip.
        let rate = received >= 65536 && seconds > 0 ? Int64(Double(received) / seconds) : nil
        try db.query(Statements.MirrorRoute.succeeded, [segment.transferID, mirror, received, rate])
    }

    /// The error to file for `error`: with other mirrors to try, an origin's refusal is worth
    /// another attempt too (elsewhere).
    func filed(_ error: HaulError) -> HaulError {
        guard segment.transfer.mirrored, !error.isTransient else { return error }
        return HaulError(error.code, error.message, hint: error.hint, transient: true)
    }

    /// After the failed attempt was filed: counts it on the mirror and hands the segment to the
    /// next healthy mirror, its progress cut back to the bad piece's start. A bad piece or
    /// another size (proof that the mirror serves other bytes) demotes the mirror for good; an
    /// error no retry mends, a third failure in a row or a failure on trial rests it, on
    /// `backoff`'s schedule, until it is tried again (`haul_mirror_failed`).
    /// - Returns: whether this failure took the mirror out of the rotation.
    func failed(_ error: HaulError, backoff: Backoff, _ db: PostgresConnection) throws -> Bool {
        guard segment.transfer.mirrored || badPieceStart != nil else { return false }
        let proof = badPieceStart != nil || error.code == .sizeMismatch
        return try db.query(
            Statements.MirrorRoute.failed,
            [
                segment.id, segment.transferID, mirror, proof, !error.isTransient, SafeText.cleanLine(error.message), received,
                badPieceStart ?? Int64.max, backoff.base, backoff.cap, Double.random(in: 0..<1),
            ]
        ).first?["out"] == "t"
    }
}
