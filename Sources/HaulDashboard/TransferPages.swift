import Foundation
import HaulCore
import HaulQueue

/// The transfer list and the page of one transfer.
enum TransferPages {
    static func list(_ page: Reader.TransferPage, view: PageContext) -> String {
        Pages.layout(
            "Transfers", current: "/transfers", view: view, live: "/api/transfers" + query(page, number: page.page),
            "<h1>Transfers</h1>" + listing(page, view: view, base: "/transfers"))
    }

    /// The query string of `page`'s filter and size, at page `number`. A batch's own page
    /// (`fixedBatch`) carries its batch in the path, not in the query.
    /// `order` replaces the page's sort.
    static func query(
        _ page: Reader.TransferPage, number: Int, fixedBatch: Bool = false, order: (column: FleetView.TransferOrder, ascending: Bool)? = nil
    ) -> String {
        let filter = page.filter
        let order = order ?? page.order
        let sorted = order.column != .id || order.ascending
        return HTML.query([
            ("state", filter.state?.rawValue), ("batch", fixedBatch ? nil : filter.batch), ("host", filter.host), ("q", filter.text),
            ("sort", sorted ? order.column.rawValue : nil), ("dir", sorted ? (order.ascending ? "asc" : "desc") : nil),
            ("per", page.perPage == Dashboard.perPage ? nil : String(page.perPage)), ("page", number == 1 ? nil : String(number)),
        ])
    }

    /// A column heading that sorts the list by `column` (descending first; again: ascending).
    static func sortHeading(_ title: String, _ column: FleetView.TransferOrder, page: Reader.TransferPage, base: String, fixedBatch: Bool) -> String {
        let current = page.order.column == column
        let ascending = current && !page.order.ascending
        let target = base + query(page, number: 1, fixedBatch: fixedBatch, order: (column, ascending))
        let sort = current ? " aria-sort=\"\(page.order.ascending ? "ascending" : "descending")\"" : ""
        return "<th scope=\"col\" data-sort=\"\(column.rawValue)\"\(sort)><a href=\"\(e(target))\">\(title)</a></th>"
    }

    /// The filter form, pager, bulk bar and table of a page of transfers served at `base`
    /// (`/transfers`, or `/batches/NAME` for one batch's, whose batch is fixed).
    static func listing(_ page: Reader.TransferPage, view: PageContext, base: String) -> String {
        let filter = page.filter
        let fixedBatch = base != "/transfers"
        let back = base + query(page, number: page.page, fixedBatch: fixedBatch)
        let stateOptions = (["" as String] + TransferState.allCases.map(\.rawValue)).map { state in
            "<option value=\"\(state)\"\(state == (filter.state?.rawValue ?? "") ? " selected" : "")>\(state.isEmpty ? "any state" : state)</option>"
        }.joined()
        let form = """
            <form method="get" action="\(e(base))" class="filters">
            <label>State <select name="state">\(stateOptions)</select></label>
            \(fixedBatch ? "" : "<label>Batch <input name=\"batch\" value=\"\(e(filter.batch ?? ""))\"></label>")
            <label>Host <input name="host" value="\(e(filter.host ?? ""))"></label>
            <label>Search <input name="q" type="search" value="\(e(filter.text ?? ""))" placeholder="URL, destination or id"></label>
            <button type="submit">Filter</button>
            </form>
            """
        let rows = page.rows.map { row($0, waiting: page.waiting[$0.status.id]?.text, view: view, back: back) }.joined(separator: "\n")
        let pages = max(1, (page.total + page.perPage - 1) / page.perPage)
        let pager = """
            <nav class="pager" aria-label="pages">\(pageLinks(current: page.page, of: pages) { e(base + query(page, number: $0, fixedBatch: fixedBatch)) })\
            <span>page <span data-page>\(page.page)</span> of \(pages) · <span data-total>\(page.total)</span> transfers</span></nav>
            """
        func heading(_ title: String, _ column: FleetView.TransferOrder) -> String {
            sortHeading(title, column, page: page, base: base, fixedBatch: fixedBatch)
        }
        let select = view.canAct ? "<th scope=\"col\"><input type=\"checkbox\" data-select-all aria-label=\"select every transfer on this page\"></th>" : ""
        let bulk =
            view.canAct
            ? "<div class=\"bulk\" data-bulk><span><span data-selected-count>0</span> selected</span>"
                + [OperatorAction.cancel, .retry, .pause, .resume].map {
                    "<button type=\"button\" data-bulk-action=\"\($0.rawValue)\" class=\"act-\($0.rawValue)\" disabled>\($0.rawValue.capitalized) selected</button>"
                }.joined() + "</div>"
            : ""
        let table = """
            \(bulk)<div class="scroll"><table class="transfers compact"><thead><tr>\(select)\(heading("ID", .id))<th scope="col">Transfer</th>\
            \(heading("State", .state))\(heading("Progress", .size))<th scope="col">Segments</th><th scope="col">Rate</th><th scope="col">ETA</th>\
            \(heading("Attempts", .attempts))\
            <th scope="col">Last error</th><th scope="col"></th></tr></thead><tbody>
            \(rows)
            </tbody></table></div>
            """
        return form + pager + (page.rows.isEmpty ? "<p class=\"muted\">No transfers match.</p>" : table) + pager
    }

    /// Page links: previous, the first, last and a few around `current` (numbers, gaps as …), next.
    static func pageLinks(current: Int, of pages: Int, href: (Int) -> String) -> String {
        guard pages > 1 else { return "" }
        let shown = Set([1, pages] + Array(max(1, current - 2)...min(pages, current + 2))).sorted()
        var parts: [String] = []
        if current > 1 { parts.append("<a href=\"\(href(current - 1))\" rel=\"prev\">Previous</a>") }
        var last = 0
        for number in shown {
            if number > last + 1 { parts.append("<span class=\"muted\">…</span>") }
            parts.append(
                number == current
                    ? "<strong aria-current=\"page\">\(number)</strong>" : "<a href=\"\(href(number))\" data-page-link=\"\(number)\">\(number)</a>")
            last = number
        }
        if current < pages { parts.append("<a href=\"\(href(current + 1))\" rel=\"next\">Next</a>") }
        return "<span class=\"pages\">" + parts.joined(separator: " ") + "</span>"
    }

    /// One row, with the contract attributes `data-transfer-id`, `data-state`, `data-bytes-done`
    /// and `data-action` that app.js (and users' scripts) find things by; `waiting` says why it
    /// does not run (`WaitReason`), under its last error.
    static func row(_ row: FleetView.TransferRow, waiting: String?, view: PageContext, back: String) -> String {
        let status = row.status
        return """
            <tr data-transfer-id="\(status.id)" data-state="\(status.state.rawValue)">\
            \(view.canAct ? "<td><input type=\"checkbox\" data-select value=\"\(status.id)\" aria-label=\"select transfer \(status.id)\"></td>" : "")\
            <td><a href="/transfers/\(status.id)">\(status.id)</a></td>\
            <td class="url"><div class="clip" title="\(e(status.url))"><span class="wrap">\(e(status.url))</span><small class="wrap">\(e(status.dest ?? "(named from the response)"))\
            \(row.batch.map { " · batch " + e($0) } ?? "")</small></div></td>\
            <td><span class="state state-\(status.state.rawValue)" data-field="state">\(status.state.rawValue)</span></td>\
            <td class="progress">\(progress(status))</td>\
            <td data-label="Segments">\(segmentMap(row.segments))</td>\
            <td data-label="Rate" data-field="rate">\(rate(status))</td>\
            <td data-label="ETA" data-field="eta">\(eta(status).map(formatSeconds) ?? "")</td>\
            <td data-label="Attempts" data-field="attempts">\(status.attempts)</td>\
            <td><span class="err wrap" data-field="error" title="\(e(status.error ?? ""))">\(e(status.error ?? ""))</span>\
            <small class="waiting" title="\(e(waiting ?? ""))" data-field="waiting">\(e(waiting ?? ""))</small></td>\
            <td>\(actions(status, view: view, back: back))</td></tr>
            """
    }

    /// A bar and `bytes / size`. A re-mirror the origin answered `304 Not Modified` for kept its
    /// file whole without fetching a byte: its bar is full and says so (`JSON.shownBytes`).
    static func progress(_ status: TransferStatus) -> String {
        let size = status.size ?? 0
        let sizeText = status.size.map { ByteSize.format($0) } ?? "?"
        let shown = JSON.shownBytes(status)
        return """
            <progress max="\(max(1, size))" value="\(min(shown, max(1, size)))"></progress>\
            <span class="bytes"><span data-bytes-done="\(shown)">\(ByteSize.format(shown))</span> / <span data-field="size">\(sizeText)</span></span>\
            \(status.unchanged ? " <small>unchanged</small>" : "")
            """
    }

    static func rate(_ status: TransferStatus) -> String {
        guard status.state == .downloading, let rate = status.rate else { return "" }
        return "\(ByteSize.format(Int64(rate)))/s"
    }

    /// The segment map as coloured cells, one per column, with the CLI's characters as text.
    static func segmentMap(_ segments: [SegmentState]) -> String {
        let cells = SegmentMap.columns(segments, width: JSON.mapWidth).map { "<i class=\"seg seg-\($0.rawValue)\">\(SegmentMap.symbol($0))</i>" }
        return "<span class=\"segmap\" data-field=\"segment-map\" title=\"# done, &gt; running, . queued, ! failed\">\(cells.joined())</span>"
    }

    static func actions(_ status: TransferStatus, view: PageContext, back: String) -> String {
        guard view.canAct else { return "" }
        let allowed = Set(allowedActions(status.state))
        return "<div class=\"actions\">"
            + [OperatorAction.pause, .resume, .retry, .cancel].map {
                Pages.actionForm("/api/transfers/\(status.id)/\($0.rawValue)", $0, view: view, back: back, enabled: allowed.contains($0))
            }.joined() + "</div>"
    }

    static func detail(_ detail: Reader.TransferDetail, view: PageContext) -> String {
        let status = detail.status
        let facts: [(String, String)] = [
            ("URL", "<span class=\"wrap\">\(e(status.url))</span>"), ("Destination", e(status.dest ?? "(named from the response)")),
            ("Host", "<a href=\"/transfers?host=\(HTML.urlComponent(detail.host))\">\(e(detail.host))</a>"),
            ("Batch", detail.batch.map { "<a href=\"/batches/\(HTML.urlComponent($0))\">\(e($0))</a>" } ?? "—"),
            ("State", "<span class=\"state state-\(status.state.rawValue)\" data-field=\"state\">\(status.state.rawValue)</span>"),
            ("Progress", progress(status)), ("Rate", "<span data-field=\"rate\">\(rate(status))</span>"),
            ("ETA", "<span data-field=\"eta\">\(eta(status).map(formatSeconds) ?? "")</span>"),
            ("Attempts", "<span data-field=\"attempts\">\(status.attempts)</span>"),
            ("Waiting", "<span class=\"wrap\" data-field=\"waiting\">\(e(detail.waiting?.text ?? ""))</span>"),
            (
                "Error",
                "<span class=\"err wrap\" data-field=\"error\">\(e(status.error ?? ""))</span>\(status.errorCode.map { " <code>\(e($0))</code>" } ?? "")"
            ),
            ("ETag", e(status.etag ?? "—")), ("Last-Modified", e(status.lastModified ?? "—")),
            ("Expected digest", "<code class=\"wrap\">\(e(status.expectedDigest ?? "—"))</code>"),
            ("Digest", "<code class=\"wrap\">\(e(status.computedDigest ?? "—"))</code>"),
            ("Layout", e(status.layout.rawValue)), ("Storage", e(status.storage ?? "—")), ("Priority", "\(status.priority)"), ("Created", e(status.createdAt)),
            ("Finished", e(status.finishedAt ?? "—")),
        ]
        let list = facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }.joined()
        let segments = Pages.table(
            ["#", "State", "Offset", "Bytes", "Attempts", "Holder", "Last error"],
            detail.segments.map {
                [
                    "\($0.index)", "<span class=\"state-\($0.state.rawValue)\">\($0.state.rawValue)</span>", ByteSize.format($0.offset),
                    "\(ByteSize.format($0.bytesDone)) / \($0.length.map { ByteSize.format($0) } ?? "?")", "\($0.attempts)",
                    $0.state == .running ? "<code>\(e($0.worker ?? ""))</code>" : "<span class=\"muted\">\(e($0.worker ?? ""))</span>",
                    "<span class=\"err wrap\">\(e($0.lastError ?? ""))</span>",
                ]
            })
        let history = Pages.table(
            ["When", "From", "To", "Error"],
            [["\(e(status.createdAt))", "", "pending (created)", ""]]
                + detail.history.map { [e($0.at), e($0.from), e($0.to), "<span class=\"err wrap\">\(e($0.error ?? ""))</span>"] })
        let mirrors =
            detail.mirrors.isEmpty
            ? ""
            : "<h2>Mirrors</h2>"
                + Pages.table(
                    ["#", "URL", "State", "Retried at", "Bytes", "Failures", "Reason"],
                    detail.mirrors.map {
                        [
                            "\($0.index)", "<span class=\"wrap\">\(e(Redaction.url($0.url)))</span>", e($0.state),
                            $0.state == "resting" ? e($0.retryAfter ?? "") : "", ByteSize.format($0.bytes), "\($0.failures)",
                            "<span class=\"err wrap\">\(e($0.reason ?? ""))</span>",
                        ]
                    })
        let back = "/transfers/\(status.id)"
        return Pages.layout(
            "Transfer \(status.id)", current: "/transfers", view: view, live: "/api/transfers/\(status.id)",
            """
            <h1>Transfer \(status.id)</h1>
            <div data-transfer-id="\(status.id)" data-state="\(status.state.rawValue)" class="detail">
            <dl class="facts">\(list)</dl>
            <p>\(segmentMap(detail.segments.map(\.state)))</p>
            \(actions(status, view: view, back: back))
            </div>
            \(mirrors)<h2>Segments</h2>\(segments)
            <h2>History</h2>\(history)
            """)
    }
}
