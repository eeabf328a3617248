import HaulCore

/// Which digest a finished file gets and how it is judged, for the finalizer and the batch probe alike.
extension TransferInfo {
    /// The algorithm to hash the finished file with: the expected digest's, sha256 for
    /// `--record-digest`, none otherwise.
    public var digestAlgorithm: Checksum.Algorithm? {
        expectedChecksum?.algorithm ?? (options.recordDigest == true ? .sha256 : nil)
    }

    /// The computed digest as it is recorded, after checking it against the expected one.
    /// - Throws: `checksum-mismatch` when they differ.
    public func verified(_ actual: Checksum) throws -> String {
        if let expected = expectedChecksum, actual != expected {
            throw HaulError(
                .checksumMismatch, "checksum mismatch: expected \(expected) but the downloaded file is \(actual)",
                hint: "check the published digest; \(retryCommand) downloads it again (\(correction) if the one expected is wrong)")
        }
        return actual.description
    }

    private var expectedChecksum: Checksum? { expectedDigest.flatMap { try? Checksum(parsing: $0) } }

    /// How the command that runs this transfer again is given the right digest.
    private var correction: String { options.localTarget == nil ? "add --checksum ALGO:HEX" : "with the right --checksum" }
}
