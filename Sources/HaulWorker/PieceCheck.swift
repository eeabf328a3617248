import HaulCore

/// Digests a run of pieces as their bytes arrive in order and compares each, when its last
/// byte is in, with the digest expected. Pure but for the digester. Owned by one thread.
final class PieceCheck {
    /// The digest algorithm.
    let algorithm: Checksum.Algorithm
    private let pieceLength: Int64
    private let fileSize: Int64
    /// The expected digests, from the piece that holds `position` when the check began.
    private let hashes: [String]
    private let firstIndex: Int64
    private var position: Int64
    private var digester: Digester

    /// A check starting at `start`, the first byte of a piece, with `hashes` for that piece on.
    init(algorithm: Checksum.Algorithm, pieceLength: Int64, fileSize: Int64, start: Int64, hashes: [String]) {
        precondition(start % pieceLength == 0)
        self.algorithm = algorithm
        self.pieceLength = pieceLength
        self.fileSize = fileSize
        self.hashes = hashes
        firstIndex = start / pieceLength
        position = start
        digester = Digester(algorithm)
    }

    /// Adds `bytes`. - Returns: the first piece they complete with the wrong digest (its index
    /// and first byte), or `nil`.
    func feed(_ bytes: UnsafeRawBufferPointer) -> (index: Int64, offset: Int64)? {
        var rest = bytes[...]
        while !rest.isEmpty {
            let index = position / pieceLength
            let end = min((index + 1) * pieceLength, fileSize)
            let take = Int(min(Int64(rest.count), end - position))
            guard take > 0 else { return nil }
            digester.update(UnsafeRawBufferPointer(rebasing: rest.prefix(take)))
            position += Int64(take)
            rest = rest.dropFirst(take)
            if position == end {
                let slot = Int(index - firstIndex)
                let digest = digester.finish()
                digester = Digester(algorithm)
                if slot < hashes.count, digest.hex != hashes[slot] { return (index, index * pieceLength) }
            }
        }
        return nil
    }
}
