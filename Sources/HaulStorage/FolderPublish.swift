import Foundation
import HaulCore

/// Publishing on a folder: build the file from its segments, verify size and digest, and
/// rename it into place under its name.
extension FolderStorage {
    /// Builds `file` from its segments (a part file per attempt, or the partial file written in
    /// place), verifies its size and digest, and renames it into place. The fence is checked
    /// while copying and hashing; others' files are refused, the lease renewed and the publish
    /// recorded (`PublishEvent.publishing`) just before the rename, so a finalizer that lost its
    /// lease never publishes. - Returns: the digest to record.
    /// - Throws: `PartsLost` when part files are gone and no earlier publish stands;
    ///   `KeptMismatch` when the digest differs.
    public func publish(_ file: FinishedFile, fence: any PublishFence) throws -> String? {
        let files = try TransferFiles(root: root, relative: file.dest)
        let segments = file.segments
        let size = file.announcedSize ?? segments.reduce(0) { $0 + $1.bytesDone }
        if let short = segments.first(where: { $0.bytesDone != $0.length }) {
            throw HaulError(.incomplete, "segment \(short.index) holds \(short.bytesDone) of \(short.length) bytes", hint: "run \(file.retryCommand)")
        }
        let source: String
        if segments.isEmpty {
            source = files.partial(generation: file.generation)
            try files.preparePartial(size: 0, generation: file.generation, url: file.url, holding: file.holding)
        } else if file.partFiles {
            // Part paths come back from the database: they must pass the same rules as a --dest.
            let pieces = try segments.flatMap { segment in
                try segment.parts.map { Assembler.Piece(path: try root.recorded($0.path), offset: $0.offset, length: $0.length) }
            }
            let lost = segments.filter { segment in segment.parts.contains { Assembler.size(of: root.path + "/" + $0.path) == nil } }
            if !lost.isEmpty {
                if file.markedPublishing, let earlier = try confirmEarlierPublish(file, files: files, size: size, fence: fence) { return earlier.digest }
                throw PartsLost(indexes: lost.map(\.index))
            }
            source = files.assembly(generation: file.generation, lease: file.lease)
            try Assembler.concatenate(pieces, into: source, root: root, keepAlive: fence.check)
        } else {
            source = files.partial(generation: file.generation)
            try files.confirmPartial(generation: file.generation, url: file.url)
        }
        guard let actual = Assembler.size(of: source) else {
            if file.markedPublishing, let earlier = try confirmEarlierPublish(file, files: files, size: size, fence: fence) { return earlier.digest }
            throw TransferFiles.partialGone(source)
        }
        if actual > size { try Assembler.truncate(source, to: size, root: root) }
        guard actual >= size else {
            throw HaulError(
                .sizeMismatch, "\(file.dest) has \(actual) bytes on storage but the origin announced \(size)", hint: "run \(file.retryCommand)")
        }
        let digest = try verifyDigest(file, path: source, fence: fence)
        try fence.refuseOthers()
        try fence.renew()
        try fence.record(.publishing)
        try Assembler.publish(source, from: file.url, as: files, generation: file.generation)
        file.holding?.release(source)
        return digest
    }

    /// An earlier finalizer of this transfer, which recorded that it set out to publish, may have
    /// renamed the file into place and lost its lease before recording it. If the destination
    /// holds a file of the right size (and digest), that publish stands.
    /// - Returns: `nil` if it does not check out.
    private func confirmEarlierPublish(_ file: FinishedFile, files: TransferFiles, size: Int64, fence: any PublishFence) throws -> EarlierPublish? {
        guard Assembler.size(of: files.destination) == size else { return nil }
        let digest = try verifyDigest(file, path: files.destination, fence: fence)
        files.removeTemporaries(generation: file.generation)
        return EarlierPublish(digest: digest)
    }

    /// A publish an earlier finalizer made, confirmed, with the digest to record.
    private struct EarlierPublish {
        let digest: String?
    }

    /// The digest of the file at `path`, checked against the expected one.
    /// - Throws: `KeptMismatch` when they differ.
    private func verifyDigest(_ file: FinishedFile, path: String, fence: any PublishFence) throws -> String? {
        guard let algorithm = file.digestAlgorithm else { return nil }
        let actual = try Assembler.digest(of: path, algorithm: algorithm, root: root, keepAlive: fence.check)
        do {
            return try fence.verify(actual)
        } catch let error as HaulError where error.code == .checksumMismatch {
            throw KeptMismatch(error: error, actual: actual.description)
        }
    }
}
