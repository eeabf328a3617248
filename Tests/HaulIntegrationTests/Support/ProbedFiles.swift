import HaulQueue

extension TransferLeases.ProbedFile {
    /// `claim`'s file as a probe batch records it when it fetched it whole: one byte from `host`.
    static func oneByte(_ claim: TransferLeases.Claim, host: String) -> Self {
        Self(
            claim: claim,
            plan: TransferLeases.Plan(
                dest: claim.info.dest ?? "", host: host, size: 1, etag: nil, lastModified: nil, contentType: nil, acceptsRanges: true,
                ranges: SegmentPlan(size: 1, segmentSize: 4 << 20).ranges, unknownLength: false),
            digest: nil, unchanged: false)
    }
}
