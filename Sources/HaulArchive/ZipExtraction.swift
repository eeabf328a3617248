import Dispatch
import Glibc
import HaulCore
import Synchronization

/// Writes a validated zip catalog into a sink: directories first, then files on parallel threads
/// (largest first), then symlinks one by one after checking where they resolve.
enum ZipExtraction {
    static func run(_ catalog: ZipCatalog, file: InputFile, sink: any EntrySink) throws -> ExtractionSummary {
        var summary = ExtractionSummary(format: .zip)
        for entry in catalog.entries {
            switch entry.kind {
            case .directory:
                try sink.makeDirectory(entry.path, modificationTime: entry.modificationTime)
                summary.directories += 1
            case .file, .symlink:
                if let parent = EntryPath.ancestors(of: entry.path).last { try sink.makeDirectory(parent, modificationTime: nil) }
            }
        }
        let files = catalog.entries.filter { $0.kind == .file }.sorted { $0.compressedSize > $1.compressedSize }
        try extractFiles(files, file: file, sink: sink)
        summary.files = files.count
        summary.bytes = Int64(files.reduce(0) { $0 + $1.size })
        let decoder = ZipEntryDecoder()
        for entry in catalog.entries where entry.kind == .symlink {
            var target: [UInt8] = []
            try decoder.decode(entry, from: file) { chunk in
                guard target.count + chunk.count <= 4096 else {
                    throw HaulError.corrupt("symlink '\(HaulError.printable(entry.path))' has a target longer than 4096 bytes")
                }
                target += chunk
            }
            try sink.createSymlink(entry.path, target: String(decoding: target, as: UTF8.self))
            summary.symlinks += 1
        }
        return summary
    }

    /// Extracts regular files on up to `sink.concurrency` threads; the first error stops the others.
    private static func extractFiles(_ files: [ZipEntryPlan], file: InputFile, sink: any EntrySink) throws {
        let next = Atomic<Int>(0)
        let failure = Mutex<(any Error)?>(nil)
        DispatchQueue.concurrentPerform(iterations: min(sink.concurrency, max(files.count, 1))) { _ in
            let decoder = ZipEntryDecoder()
            while failure.withLock({ $0 == nil }) {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < files.count else { return }
                do {
                    try write(files[index], file: file, sink: sink, decoder: decoder)
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
    }

    private static func write(_ entry: ZipEntryPlan, file: InputFile, sink: any EntrySink, decoder: ZipEntryDecoder) throws {
        let output = try sink.createFile(
            entry.path, sizeBound: Int64(clamping: entry.size), executable: entry.isExecutable, modificationTime: entry.modificationTime)
        var offset: Int64 = 0
        do {
            try decoder.decode(entry, from: file) { chunk in
                try output.write(chunk, at: offset)
                offset += Int64(chunk.count)
            }
        } catch {
            output.abort()
            throw error
        }
        try output.finish(size: offset)
    }
}

/// Threads used to inflate or deflate independent entries: the online processors, at most 8.
let workerCount = max(1, min(8, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
