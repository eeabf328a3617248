import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// A list's statuses are read this many transfers at a time, so that what `haul get -i` holds
/// while it follows and reports a list of any length is its ids, not their statuses.
private let statusChunk = 1000

/// `ids` cut into runs of `statusChunk`, in order.
private func chunks(of ids: [Int64]) -> some Sequence<[Int64]> {
    stride(from: 0, to: ids.count, by: statusChunk).lazy.map { Array(ids[$0..<min(ids.count, $0 + statusChunk)]) }
}

/// The transfers of a list not yet seen final, checked from the front a chunk at a time. A
/// list's transfers settle about in the order they were claimed (by id), so the check after
/// each batch reads the chunk still moving, not every open id: that made a long list's checks
/// cost time in the square of its length (26 ms each for 50 000 ids, after each batch).
struct UnsettledList {
    /// The checked front's ids still open, in the order given.
    private var front: [Int64] = []
    private let ids: [Int64]
    /// Where the ids not checked yet begin.
    private var next = 0

    init(_ ids: [Int64]) {
        self.ids = ids
    }

    /// Whether every transfer was seen final (or gone).
    var isEmpty: Bool { front.isEmpty && next == ids.count }

    /// How many are not seen final yet (the front's open ones and all not checked yet).
    var count: Int { front.count + ids.count - next }

    /// Drops the front's transfers that `unsettled` no longer returns, then, while the front is
    /// all final, checks the next chunk. Ids with no transfer count as final.
    mutating func check(_ unsettled: ([Int64]) throws -> [Int64]) rethrows {
        while true {
            if front.isEmpty {
                guard next < ids.count else { return }
                front = Array(ids[next..<min(ids.count, next + statusChunk)])
                next += front.count
            }
            let open = Set(try unsettled(front))
            front = front.filter(open.contains)
            guard front.isEmpty else { return }
        }
    }
}

/// The progress bar's figures for the transfers `haul get` follows. A transfer's figures (state,
/// size, bytes) are read while it is open and added to the sums once it is final, never read
/// again; whole statuses are read only of the few open ones at the list's front.
struct GetListProgress {
    /// The ids of the transfers not final at the last poll, in the order given.
    private var open: [Int64]
    private let count: Int
    private var settledBytes: Int64 = 0
    private var settledSizes: Int64 = 0
    private var settledDone = 0
    /// Settled transfers whose size is unknown (failed before a probe answered).
    private var settledUnsized = 0

    /// What the bar shows after a poll.
    struct Figures {
        /// Bytes saved so far, each transfer's at most its size.
        let bytes: Int64
        /// The sizes' sum, `nil` while one is unknown.
        let size: Int64?
        /// How many are done.
        let done: Int
        /// The first open transfer, in the order given (the bar shows its state for one URL).
        let first: TransferStatus?
        /// The first open transfer of the list's front (`shownWhole`) that waits to retry: it
        /// speaks for all of them.
        let waiting: TransferStatus?
    }

    init(_ ids: [Int64]) {
        open = ids
        count = ids.count
    }

    /// How many open transfers, from the front of the list, a poll reads whole: the first is the
    /// bar's state for one URL, and the first of them that waits to retry gives the bar's note.
    /// A list settles about in its order, so a transfer that keeps failing soon reaches the front.
    static let shownWhole = 16

    /// Reads what the open transfers add to the sums `statusChunk` at a time through `sums`, adds
    /// those now final to the settled sums and keeps the others open, then reads the first
    /// `shownWhole` still open whole through `statuses`. Ids with no transfer drop out.
    /// - Parameter live: bytes this process received for a transfer, newer than its checkpoint.
    mutating func poll(
        sums: ([Int64]) throws -> [TransferProgress], statuses: ([Int64]) throws -> [TransferStatus], live: (Int64) -> Int64
    ) rethrows -> Figures {
        var stillOpen: [Int64] = []
        var openBytes: Int64 = 0
        var openSizes: Int64 = 0
        var openUnsized = 0
        for chunk in chunks(of: open) {
            let byID = Dictionary(uniqueKeysWithValues: try sums(chunk).map { ($0.id, $0) })
            for transfer in chunk.compactMap({ byID[$0] }) {
                let bytes = min(transfer.size ?? .max, max(transfer.bytesDone, live(transfer.id)))
                if transfer.state.isFinal {
                    settledBytes += bytes
                    settledSizes += transfer.size ?? 0
                    settledUnsized += transfer.size == nil ? 1 : 0
                    settledDone += transfer.state == .done ? 1 : 0
                } else {
                    stillOpen.append(transfer.id)
                    openBytes += bytes
                    openSizes += transfer.size ?? 0
                    openUnsized += transfer.size == nil ? 1 : 0
                }
            }
        }
        open = stillOpen
        let shown = try statuses(Array(open.prefix(Self.shownWhole)))
        return Figures(
            bytes: settledBytes + openBytes, size: settledUnsized + openUnsized == 0 ? settledSizes + openSizes : nil, done: settledDone,
            first: shown.first, waiting: shown.first { StatusView.retrying($0) != nil })
    }

    /// The bar's state: the one transfer's state, or `3/5 done` for several.
    func state(_ figures: Figures) -> String {
        count == 1 ? figures.first?.state.rawValue ?? "" : "\(figures.done)/\(count) done"
    }
}

extension GetCommand {
    /// What the final report found, for the exit status and the clean-up after it.
    struct ReportOutcome {
        /// The error codes of the transfers not done, in the order given.
        var failures: [HaulError.Code] = []
        /// Whether one was canceled (its data is removed after the report).
        var canceled = false
    }

    /// Prints a line for each transfer of a settled list, in the order given, and with `json`
    /// the result on standard output (`{"transfers": [...]}` for several, written as it is
    /// read), reading their statuses `statusChunk` at a time.
    static func report(_ ids: [Int64], store: TransferStore, backend: any Storage, quiet: Bool, json: Bool) throws -> ReportOutcome {
        var outcome = ReportOutcome()
        var opened = false
        for chunk in chunks(of: ids) {
            let statuses = try store.statuses(chunk)
            if statuses.count < chunk.count {
                // Removed while the get ran (`haul prune --older-than 0s` meanwhile).
                let found = Set(statuses.map(\.id))
                for id in chunk where !found.contains(id) {
                    Output.error("haul: transfer \(id) was removed while this get ran: run the same command again to fetch it")
                    outcome.failures.append(.noSuchTransfer)
                }
            }
            for final in statuses {
                let path = backend.describe(final.dest ?? "")
                if final.state == .done && final.unchanged {
                    // The origin answered `304 Not Modified`: nothing was saved, the file there is current.
                    if !quiet { Output.error("\(path) is up to date: unchanged at the origin (\(ByteSize.format(final.size ?? 0)) kept)") }
                } else if final.state == .done {
                    if !quiet { Output.error("saved \(path) (\(ByteSize.format(final.size ?? 0)))\(final.computedDigest.map { ", \($0)" } ?? "")") }
                } else {
                    Output.error("haul: transfer \(final.id) \(final.state.rawValue): \(final.error ?? "no reason recorded")")
                    // A canceled one, with no code, gives 1.
                    outcome.failures.append(HaulError.Code(stored: final.errorCode ?? "", among: HaulError.Code.known))
                    outcome.canceled = outcome.canceled || final.state == .canceled
                }
                guard json else { continue }
                let result = jsonResult(final, path: path)
                if ids.count == 1 {
                    Output.json(result)
                } else {
                    StandardStream.write((opened ? "," : "{\"transfers\":[") + Output.jsonText(result), to: 1)
                    opened = true
                }
            }
        }
        if json, ids.count > 1 { StandardStream.write((opened ? "" : "{\"transfers\":[") + "]}\n", to: 1) }
        return outcome
    }

    /// One transfer's `--json` result.
    private static func jsonResult(_ final: TransferStatus, path: String) -> [String: Any] {
        [
            "id": final.id, "url": final.url, "state": final.state.rawValue, "path": final.state == .done ? path : NSNull(),
            "size": final.size ?? NSNull(), "digest": final.computedDigest ?? NSNull(), "error": final.error ?? NSNull(),
            "code": final.errorCode ?? NSNull(), "unchanged": final.unchanged,
        ]
    }
}
