import Foundation
import HaulCore
import HaulQueue

/// Escapes text for HTML (short, because templates use it on every value).
func e(_ text: String) -> String { HTML.escape(text) }

/// The server-rendered pages (readable without JavaScript; `/static/app.js` makes them live).
enum Pages {
    static let sections = [("Overview", "/"), ("Transfers", "/transfers"), ("Batches", "/batches"), ("Workers", "/workers"), ("Hosts", "/hosts")]

    /// The frame of every page: head (CSP-clean: no inline script or style), navigation, main.
    /// `live` is the JSON the page polls for its updates; a page of the dashboard without one
    /// polls `/api/ping`, so that a lost database shows on every page.
    static func layout(_ title: String, current: String?, view: PageContext?, live: String? = nil, _ main: String) -> String {
        var head = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(e(title)) · haul</title>
            <link rel="stylesheet" href="/static/app.css">
            <link rel="icon" href="/static/icon.svg" type="image/svg+xml">
            <script src="/static/app.js" defer></script>
            """
        if let csrf = view?.csrf { head += "\n<meta name=\"csrf-token\" content=\"\(e(csrf))\">" }
        var nav = sections.map { name, path in
            "<a href=\"\(path)\"\(path == current ? " aria-current=\"page\"" : "")>\(name)</a>"
        }.joined()
        if let view {
            if view.readOnly {
                nav += "<span class=\"badge\">read-only</span>"
            } else if let csrf = view.csrf {
                nav +=
                    "<form method=\"post\" action=\"/logout\" class=\"logout\"><input type=\"hidden\" name=\"csrf\" value=\"\(e(csrf))\"><input type=\"hidden\" name=\"return\" value=\"/login\"><button type=\"submit\">Log out</button></form>"
            }
        }
        return head + """
            </head><body>
            <header><strong class="brand">haul</strong><nav>\(nav)</nav></header>
            <main\((live ?? (view == nil ? nil : "/api/ping")).map { " data-live=\"\(e($0))\"" } ?? "")>
            <p id="flash" role="status" aria-live="polite"></p>
            \(main)
            </main></body></html>
            """
    }

    static func login(error: String?) -> String {
        layout(
            "Log in", current: nil, view: nil,
            """
            <h1>Log in</h1>
            \(error.map { "<p class=\"error\">\(e($0))</p>" } ?? "")
            <form method="post" action="/login" class="login">
            <label for="token">Dashboard token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
            <button type="submit">Log in</button>
            </form>
            """)
    }

    static func message(_ title: String, _ text: String, back: String? = nil) -> String {
        layout(
            title, current: nil, view: nil,
            "<h1>\(e(title))</h1><p class=\"error\">\(e(text))</p>" + (back.map { "<p><a href=\"\(e($0))\">Back</a></p>" } ?? ""))
    }

    /// What a page opened while the database is unreachable shows; app.js polls and reloads
    /// it once the database answers again.
    static func outage(_ reason: String) -> String {
        layout(
            "Database unreachable", current: nil, view: nil, live: "/api/overview",
            """
            <h1>Database unreachable</h1>
            <p role="alert" class="outage" data-outage>The dashboard cannot reach PostgreSQL: \(e(reason))</p>
            <p class="muted">This page tries again every few seconds and reloads once it answers.</p>
            """)
    }

    static func overview(_ overview: Reader.Overview, view: PageContext) -> String {
        let states = TransferState.allCases.map { state in
            let count = overview.counts[state] ?? 0
            return
                "<a class=\"tile state-\(state.rawValue)\" href=\"/transfers?state=\(state.rawValue)\"><span data-count=\"\(state.rawValue)\">\(count)</span> \(state.rawValue)</a>"
        }.joined()
        let failures = overview.failures.isEmpty ? "<p class=\"muted\">No failed transfers.</p>" : failureTable(overview.failures, link: nil)
        let alive = overview.workers.filter { $0.state == "alive" }
        let window = overview.window
        return layout(
            "Overview", current: "/", view: view, live: "/api/overview" + (window == .standard ? "" : "?window=" + window.name),
            """
            <h1>Overview</h1>
            <section class="tiles">\(states)</section>
            \(windowPicker(window, path: "/"))
            <section class="charts"><div><h2>Bytes per second, \(window.title)</h2>\(Chart.throughput(overview.throughput, window: window))</div>\
            <div><h2>Queue, \(window.title)</h2>\(Chart.queue(overview.queue, window: window))</div></section>
            <section><h2>Live workers: <span data-count="workers">\(alive.count)</span></h2>\(workerTable(alive))</section>
            <section><h2>Failures by reason</h2>\(failures)</section>
            <section><h2>Queue by host</h2>\(hostTable(overview.hosts, view: nil))</section>
            """)
    }

    static func batches(_ batches: [FleetView.BatchRow], view: PageContext) -> String {
        let rows = batches.map { batch -> [String] in
            let done = batch.countsByState[.done] ?? 0
            let failed = batch.countsByState[.failed] ?? 0
            let path = "/batches/" + HTML.urlComponent(batch.name)
            let counts = TransferState.allCases.compactMap { state in batch.countsByState[state].map { "\(state.rawValue) \($0)" } }.joined(separator: ", ")
            let failedCount = "<span data-field=\"failed\">\(failed)</span>"
            return [
                "<a href=\"\(e(path))\">\(e(batch.name))</a>",
                "<progress max=\"\(max(1, batch.total))\" value=\"\(done)\" data-field=\"progress\"></progress> <span data-field=\"done\">\(done)</span>/\(batch.total)",
                failed == 0 ? failedCount : "<a class=\"err\" href=\"\(e(path))?state=failed\">\(failedCount)</a>",
                "<span data-field=\"states\">\(e(counts))</span>",
                e(batch.createdAt), view.canAct ? batchActions(batch.name, counts: batch.countsByState, view: view, back: "/batches") : "",
            ]
        }
        return layout(
            "Batches", current: "/batches", view: view, live: "/api/batches",
            "<h1>Batches</h1>"
                + (rows.isEmpty
                    ? "<p class=\"muted\">No batches.</p>"
                    : table(["Batch", "Done", "Failed", "States", "Created", ""], rows, rowAttributes: batches.map { "data-batch=\"\(e($0.name))\"" })))
    }

    /// A batch's action buttons. Each names how many transfers it would change (those whose
    /// state allows it) in `data-confirm`, which app.js asks the operator to confirm first.
    static func batchActions(_ name: String, counts: [TransferState: Int], view: PageContext, back: String) -> String {
        let buttons = [OperatorAction.pause, .resume, .retry, .cancel].map { action in
            let touched = touched(action, counts: counts)
            return actionForm(
                "/api/batches/\(HTML.urlComponent(name))/\(action.rawValue)", action, view: view, back: back, enabled: touched > 0,
                confirm: question(batch: name, action, touched: touched))
        }
        return "<div class=\"actions\">\(buttons.joined())</div>"
    }

    /// How many of transfers counted by state `action` would change (those whose state allows it).
    static func touched(_ action: OperatorAction, counts: [TransferState: Int]) -> Int {
        counts.filter { action.allowedFrom.contains($0.key) }.values.reduce(0, +)
    }

    /// The question a batch action asks (`data-confirm`, and the page without JavaScript).
    static func question(batch name: String, _ action: OperatorAction, touched: Int) -> String {
        "\(action.rawValue.capitalized) \(touched) transfer\(touched == 1 ? "" : "s") of batch \(name)?"
    }

    /// The page that asks before a batch action posted without JavaScript.
    static func confirm(batch name: String, _ action: OperatorAction, touched: Int, csrf: String, back: String) -> String {
        layout(
            "Confirm", current: nil, view: nil,
            """
            <h1 role="alertdialog" aria-label="confirm">\(e(question(batch: name, action, touched: touched)))</h1>
            <form method="post" action="/api/batches/\(HTML.urlComponent(name))/\(action.rawValue)" class="inline">\
            <input type="hidden" name="csrf" value="\(e(csrf))"><input type="hidden" name="return" value="\(e(back))">\
            <input type="hidden" name="confirmed" value="1">\
            <button type="submit" data-action="\(action.rawValue)" class="act-\(action.rawValue)">Yes, \(action.rawValue) \(touched)</button></form>
            <a href="\(e(back))">No, go back</a>
            """)
    }

    /// Failures grouped by reason (`FleetView.failureReasons`); `link` is where the counts lead.
    static func failureTable(_ failures: [FleetView.FailureReason], link: String?) -> String {
        table(
            ["Reason", "Transfers", "Example"],
            failures.map { failure in
                let count = "<span data-field=\"count\">\(failure.count)</span>"
                return [
                    "<code>\(e(failure.code))</code>", link.map { "<a href=\"\(e($0))\">\(count)</a>" } ?? count,
                    "<span class=\"err wrap\">\(e(failure.example))</span>",
                ]
            }, rowAttributes: failures.map { "data-reason=\"\(e($0.code))\"" })
    }

    /// Links to the charts' windows (`?window=`), the shown one marked.
    static func windowPicker(_ window: ChartWindow, path: String) -> String {
        "<nav class=\"windows\" aria-label=\"chart window\">Charts over the last "
            + ChartWindow.all.map {
                $0 == window
                    ? "<strong aria-current=\"true\" data-window=\"\($0.name)\">\($0.name)</strong>"
                    : "<a href=\"\(path)?window=\($0.name)\" data-window=\"\($0.name)\">\($0.name)</a>"
            }.joined(separator: " ") + "</nav>"
    }

    static func workers(_ workers: [FleetView.WorkerInfo], throughput: [(name: String, bytes: [Int64])], window: ChartWindow, view: PageContext) -> String {
        layout(
            "Workers", current: "/workers", view: view,
            "<h1>Workers</h1><p><a href=\"/workers?all=1\">Include stopped workers</a></p>" + workerTable(workers)
                + "<h2>Bytes per second per worker, \(window.title)</h2>" + windowPicker(window, path: "/workers")
                + Chart.throughputBy("bytes per second per worker over the \(window.title)", kind: "workers", throughput, window: window))
    }

    static func hosts(_ hosts: [FleetView.HostLoad], throughput: [(name: String, bytes: [Int64])], window: ChartWindow, view: PageContext) -> String {
        layout(
            "Hosts", current: "/hosts", view: view, live: "/api/hosts",
            "<h1>Hosts and their limits</h1>" + hostTable(hosts, view: view)
                + "<h2>Bytes per second per origin, \(window.title)</h2>" + windowPicker(window, path: "/hosts")
                + Chart.throughputBy("bytes per second per origin over the \(window.title)", kind: "hosts", throughput, window: window)
                + "<p class=\"muted\">An origin's bytes count in the minute their segment finished.</p>")
    }

    static func workerTable(_ workers: [FleetView.WorkerInfo]) -> String {
        guard !workers.isEmpty else { return "<p class=\"muted\">No workers.</p>" }
        return table(
            ["Worker", "Host", "PID", "State", "Held", "Rate", "Heartbeat", "Roles"],
            workers.map {
                [
                    "<code>\(e($0.id))</code>", e($0.host), "\($0.pid)", "<span class=\"state-\(e($0.state))\">\(e($0.state))</span>",
                    "\($0.segmentsHeld)", workerRate($0.rate),
                    "<span data-sort-value=\"\(String(format: "%.1f", $0.silentFor))\">\(String(format: "%.1fs ago", $0.silentFor))</span>", e($0.roles),
                ]
            })
    }

    /// A worker's rate cell: `measuring` (sorted below 0 B/s) until its second heartbeat.
    static func workerRate(_ rate: Double?) -> String {
        guard let rate else { return "<span class=\"muted\" data-sort-value=\"-1\">measuring</span>" }
        return "<span data-sort-value=\"\(Int64(rate))\">\(ByteSize.format(Int64(rate)))/s</span>"
    }

    static func hostTable(_ hosts: [FleetView.HostLoad], view: PageContext?) -> String {
        guard !hosts.isEmpty else { return "<p class=\"muted\">No hosts.</p>" }
        return table(
            ["Host", "Running / limit", "Queued", view?.canAct == true ? "Set limit" : nil].compactMap { $0 },
            hosts.map { host in
                var cells = [
                    e(host.host == "*" ? "* (default)" : host.host + (host.explicit ? "" : " (default)")),
                    "<meter min=\"0\" max=\"\(max(1, host.limit))\" value=\"\(min(host.running, host.limit))\"></meter> <span data-field=\"running\">\(host.running)</span> / <span data-field=\"limit\">\(host.limit)</span>"
                        + (host.limit == 0 ? " <span class=\"badge\" data-field=\"paused\">paused</span>" : ""),
                    "<span data-field=\"queued\">\(host.queued)</span>",
                ]
                if let view, view.canAct, let csrf = view.csrf {
                    cells.append(
                        """
                        <form method="post" action="/api/hosts/\(HTML.urlComponent(host.host))/limit" class="inline">\
                        <input type="hidden" name="csrf" value="\(e(csrf))"><input type="hidden" name="return" value="/hosts">\
                        <input name="limit" type="number" min="0" value="\(host.limit)" aria-label="limit for \(e(host.host))">\
                        <button type="submit" data-action="set-limit">Set</button></form>\
                        <form method="post" action="/api/hosts/\(HTML.urlComponent(host.host))/\(host.limit == 0 ? "resume" : "pause")" class="inline" data-origin-toggle>\
                        <input type="hidden" name="csrf" value="\(e(csrf))"><input type="hidden" name="return" value="/hosts">\
                        <button type="submit" data-action="\(host.limit == 0 ? "resume" : "pause")-origin">\(host.limit == 0 ? "Resume" : "Pause") \(host.host == "*" ? "default" : "origin")</button></form>
                        """)
                }
                return cells
            }, rowAttributes: hosts.map { "data-host=\"\(e($0.host))\"" })
    }

    /// A no-JavaScript form posting one action; app.js sends the same request with fetch.
    /// With `confirm`, app.js asks that question first and reloads the page once it is done.
    static func actionForm(_ path: String, _ action: OperatorAction, view: PageContext, back: String, enabled: Bool = true, confirm: String? = nil) -> String {
        """
        <form method="post" action="\(e(path))" class="inline"\(confirm.map { " data-confirm=\"\(e($0))\"" } ?? "")>\
        <input type="hidden" name="csrf" value="\(e(view.csrf ?? ""))">\
        <input type="hidden" name="return" value="\(e(back))">\
        <button type="submit" data-action="\(action.rawValue)" class="act-\(action.rawValue)"\(enabled ? "" : " disabled")>\(action.rawValue.capitalized)</button></form>
        """
    }

    /// A table whose cells are already HTML.
    /// Its named columns sort in the browser (app.js): by a cell's `data-sort-value` if an
    /// element in it has one, else by its text, as numbers when both are.
    static func table(_ headings: [String], _ rows: [[String]], rowAttributes: [String]? = nil) -> String {
        let head = headings.map {
            $0.isEmpty ? "<th scope=\"col\"></th>" : "<th scope=\"col\" data-sort><button type=\"button\" class=\"sort\">\(e($0))</button></th>"
        }.joined()
        // Each cell names its column (`data-label`), which a phone shows before it instead of the head.
        let labels = headings.map { $0.isEmpty ? "" : " data-label=\"\(e($0))\"" }
        let body = rows.enumerated().map { index, cells in
            "<tr\(rowAttributes.map { " " + $0[index] } ?? "")>"
                + cells.enumerated().map { "<td\($0.offset < labels.count ? labels[$0.offset] : "")>\($0.element)</td>" }.joined() + "</tr>"
        }.joined(separator: "\n")
        return "<div class=\"scroll\"><table data-sortable><thead><tr>\(head)</tr></thead><tbody>\n\(body)\n</tbody></table></div>"
    }
}
