import Foundation
import HaulCore
import HaulQueue

/// The page of one batch: its progress, rate, failures by reason, its transfers and its actions.
enum BatchPages {
    static func page(_ batch: Reader.BatchDetail, view: PageContext) -> String {
        let summary = batch.summary
        let name = summary.name
        let path = "/batches/" + HTML.urlComponent(name)
        let done = summary.countsByState[.done] ?? 0
        let counts = TransferState.allCases.compactMap { state in
            summary.countsByState[state].map { "<a href=\"\(e(path))?state=\(state.rawValue)\" class=\"state-\(state.rawValue)\">\(state.rawValue) \($0)</a>" }
        }.joined(separator: " · ")
        let size = max(summary.bytesKnown, summary.bytesDone)
        let facts: [(String, String)] = [
            (
                "Transfers",
                "<progress max=\"\(max(1, summary.total))\" value=\"\(done)\" data-field=\"progress\"></progress> <span data-field=\"done\">\(done)</span> of \(summary.total) done"
            ),
            (
                "Bytes",
                "<progress max=\"\(max(1, size))\" value=\"\(summary.bytesDone)\"></progress> \(ByteSize.format(summary.bytesDone)) of \(ByteSize.format(size)) known"
            ),
            ("Rate", summary.rate.map { "\(ByteSize.format(Int64($0)))/s (while any of its transfers ran)" } ?? "—"),
            ("States", "<span data-field=\"states\" data-links>\(counts.isEmpty ? "—" : counts)</span>"),
        ]
        let failures =
            batch.failures.isEmpty
            ? "<p class=\"muted\">No failed transfers.</p>"
            : Pages.failureTable(batch.failures, link: path + "?state=failed")
        let actions = view.canAct ? Pages.batchActions(summary.name, counts: summary.countsByState, view: view, back: path) : ""
        return Pages.layout(
            "Batch \(name)", current: "/batches", view: view, live: "/api/transfers" + HTML.query([("batch", name)] + liveFilter(batch.transfers)),
            """
            <h1>Batch <span class="wrap">\(e(name))</span></h1>
            <div data-batch="\(e(name))" class="detail"><dl class="facts">\(facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }.joined())</dl>\(actions)</div>
            <h2>Failures by reason</h2>\(failures)
            <h2>Transfers</h2>\(TransferPages.listing(batch.transfers, view: view, base: path))
            """)
    }

    /// The filter of the transfers shown, for the page's live twin.
    private static func liveFilter(_ page: Reader.TransferPage) -> [(String, String?)] {
        let sorted = page.order.column != .id || page.order.ascending
        return [
            ("state", page.filter.state?.rawValue), ("host", page.filter.host), ("q", page.filter.text),
            ("sort", sorted ? page.order.column.rawValue : nil), ("dir", sorted ? (page.order.ascending ? "asc" : "desc") : nil),
            ("per", String(page.perPage)), ("page", String(page.page)),
        ]
    }
}
