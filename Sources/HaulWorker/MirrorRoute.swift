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

    /// Whether this attempt's validators may be checked against the planner's probe.
    var pinsValidators: Bool { mirror == 0 }

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

    /// Loads the digests of the pieces the rest of the segment covers, from `first` (a piece start).
    func begin(first: Int64, _ db: PostgresConnection) throws {
        let info = segment.transfer
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
    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        received += Int64(bytes.count)
        guard let check else { return }
        if let bad = check.feed(bytes) {
            badPieceStart = bad.offset - segment.offset
            throw HaulError(
                .checksumMismatch, "piece \(bad.index) from \(OriginURL.hostKey(url)) has the wrong \(check.algorithm.rawValue) digest",
                hint: "the mirror is demoted and the piece fetched again from another", transient: true)
        }
    }

    /// Adds what the attempt brought to its mirror.
    func succeeded(_ db: PostgresConnection) throws {
        guard segment.transfer.mirrored else { return }
        try db.query(
            Statements.MirrorRoute.succeeded,
            [segment.transferID, mirror, received])
    }

    /// The error to file for `error`: with other mirrors to try, an origin's refusal is worth
    /// another attempt too (elsewhere).
    func filed(_ error: HaulError) -> HaulError {
        guard segment.transfer.mirrored, !error.isTransient else { return error }
        return HaulError(error.code, error.message, hint: error.hint, transient: true)
    }

    /// After the failed attempt was filed: counts it on the mirror (demoting it for a bad piece,
    /// an error no retry mends, or its third failure) and hands the segment to the next healthy
    /// mirror, its progress cut back to the bad piece's start.
    /// - Returns: whether this failure demoted the mirror.
    func failed(_ error: HaulError, _ db: PostgresConnection) throws -> Bool {
        guard segment.transfer.mirrored || badPieceStart != nil else { return false }
        let demote = badPieceStart != nil || !error.isTransient
        return try db.query(
            Statements.MirrorRoute.failed,
            [segment.id, segment.transferID, mirror, demote, SafeText.cleanLine(error.message), received, badPieceStart ?? Int64.max]
        ).first?["demoted"] == "t"
    }
}
