import HaulMetrics

/// The dashboard's only script, stylesheet and icon, compiled into the binary (no build step, no CDN):
/// served from this server, which is all the Content-Security-Policy allows.
enum Assets {
    /// `GET /static/NAME`.
    static func response(_ name: String) -> HTTPResponse {
        switch name {
        case "app.js":
            return HTTPResponse(status: 200, contentType: "text/javascript; charset=utf-8", body: script)
        case "app.css":
            return HTTPResponse(status: 200, contentType: "text/css; charset=utf-8", body: stylesheet)
        case "icon.svg":
            return HTTPResponse(status: 200, contentType: "image/svg+xml", body: icon)
        default:
            return Reply.text(404, "not found\n")
        }
    }

    static let script = #"""
        // Haul dashboard: makes the server-rendered pages live. Polls the page's JSON twin
        // (main[data-live]) as often as the server's poll_after_ms allows, updates rows in place
        // (text only, never HTML), and sends actions with the page's CSRF token.
        'use strict';
        (function () {
          const main = document.querySelector('main[data-live]');
          const meta = document.querySelector('meta[name="csrf-token"]');
          const csrf = meta ? meta.content : '';
          const flash = document.getElementById('flash');
          const classes = { '#': 'done', '>': 'running', '.': 'queued', '!': 'failed' };
          let timer = null;

          function bytes(n) {
            const names = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
            let value = n, index = 0;
            while (value >= 1024 && index < names.length - 1) { value /= 1024; index++; }
            return index === 0 ? n + ' B' : (Math.round(value * 10) / 10).toFixed(1) + ' ' + names[index];
          }
          function seconds(s) {
            const t = Math.round(s);
            const pad = (x) => String(x).padStart(2, '0');
            if (t >= 3600) return Math.floor(t / 3600) + 'h ' + pad(Math.floor(t % 3600 / 60)) + 'm';
            if (t >= 60) return Math.floor(t / 60) + 'm ' + pad(t % 60) + 's';
            return t + 's';
          }
          function setText(root, selector, text) {
            const el = root.querySelector(selector);
            if (el && el.textContent !== text) el.textContent = text;
          }

          function updateTransfer(el, t) {
            el.dataset.state = t.state;
            const state = el.querySelector('[data-field="state"]');
            if (state) { state.textContent = t.state; state.className = 'state state-' + t.state; }
            const done = el.querySelector('[data-bytes-done]');
            if (done) { done.dataset.bytesDone = String(t.shown_bytes); done.textContent = bytes(t.shown_bytes); }
            setText(el, '[data-field="size"]', t.size == null ? '?' : bytes(t.size));
            const bar = el.querySelector('progress');
            if (bar) { bar.max = Math.max(1, t.size || 0); bar.value = Math.min(t.shown_bytes, bar.max); }
            setText(el, '[data-field="rate"]', t.state === 'downloading' && t.rate != null ? bytes(Math.floor(t.rate)) + '/s' : '');
            setText(el, '[data-field="eta"]', t.eta_seconds == null ? '' : seconds(t.eta_seconds));
            setText(el, '[data-field="attempts"]', String(t.attempts));
            setText(el, '[data-field="error"]', t.error || '');
            const error = el.querySelector('[data-field="error"]');
            if (error && error.title !== (t.error || '')) error.title = t.error || '';
            setText(el, '[data-field="waiting"]', t.waiting || '');
            const waiting = el.querySelector('.waiting[data-field="waiting"]');
            if (waiting && waiting.title !== (t.waiting || '')) waiting.title = t.waiting || '';
            const map = el.querySelector('[data-field="segment-map"]');
            if (map && map.textContent !== t.segment_map) {
              map.replaceChildren(...Array.from(t.segment_map).map((c) => {
                const cell = document.createElement('i');
                cell.className = 'seg seg-' + classes[c];
                cell.textContent = c;
                return cell;
              }));
            }
            el.querySelectorAll('button[data-action]').forEach((b) => { b.disabled = !t.actions.includes(b.dataset.action); });
          }

          function updateOverview(data) {
            Object.keys(data.states).forEach((s) => setText(document, '[data-count="' + s + '"]', String(data.states[s])));
            setText(document, '[data-count="workers"]', String(data.workers_alive));
            const line = document.querySelector('[data-chart="throughput"]');
            const samples = data.throughput.map((p) => p.bytes / (data.step_seconds || 60));
            if (line && samples.length > 1) {
              // As Chart.swift draws it: the plot box, and the y axis up to 1, 2 or 5 times a power of ten.
              const left = 98, right = 628, top = 12, bottom = 150;
              const peak = Math.max(0, ...samples);
              const scale = Math.pow(1024, Math.floor(Math.log(Math.max(1, peak)) / Math.log(1024)));
              const magnitude = peak > 0 ? Math.pow(10, Math.floor(Math.log10(peak / scale))) : 1;
              const axisTop = peak > 0 ? scale * [1, 2, 5, 10].map((n) => n * magnitude).find((n) => n >= peak / scale) : 1;
              line.setAttribute('points', samples.map((v, i) =>
                (left + i * (right - left) / (samples.length - 1)).toFixed(1) + ',' + (bottom - Math.min(v, axisTop) / axisTop * (bottom - top)).toFixed(1)).join(' '));
              const svg = line.closest('svg');
              setText(svg, '[data-axis-top]', bytes(Math.floor(axisTop)) + '/s');
              setText(svg, '[data-axis-half]', bytes(Math.floor(axisTop / 2)) + '/s');
              setText(document, '[data-chart-peak]', bytes(Math.floor(peak)) + '/s');
              setText(document, '[data-chart-last]', bytes(Math.floor(samples[samples.length - 2])) + '/s');
            }
          }

          // Rows the page already shows: failures by reason and hosts (a new reason or host shows on reload).
          function updateRows(attribute, items, key, fields) {
            items.forEach((item) => {
              const row = document.querySelector('tr[' + attribute + '="' + CSS.escape(item[key]) + '"]');
              if (!row) return;
              fields.forEach((field) => setText(row, '[data-field="' + field + '"]', String(item[field])));
              const meter = row.querySelector('meter');
              if (meter && item.limit != null) { meter.max = Math.max(1, item.limit); meter.value = Math.min(item.running, item.limit); }
              if (item.paused != null) updateOrigin(row, item);
            });
          }

          // An origin's row says whether it is paused, and its button does the other thing.
          function updateOrigin(row, host) {
            const badge = row.querySelector('[data-field="paused"]');
            if (host.paused && !badge) {
              const made = document.createElement('span');
              made.className = 'badge';
              made.dataset.field = 'paused';
              made.textContent = 'paused';
              const limit = row.querySelector('[data-field="limit"]');
              if (limit) limit.after(' ', made);
            } else if (!host.paused && badge) {
              badge.remove();
            }
            const form = row.querySelector('form[data-origin-toggle]');
            const button = form && form.querySelector('button');
            if (!button) return;
            const verb = host.paused ? 'resume' : 'pause';
            form.action = form.action.replace(/\/(pause|resume)$/, '/' + verb);
            button.dataset.action = verb + '-origin';
            button.textContent = (host.paused ? 'Resume ' : 'Pause ') + (host.host === '*' ? 'default' : 'origin');
          }

          // A batch's row (Batches) or facts (its page): counts, states, and each action's button
          // and question, as the server counts them now.
          function updateBatch(batch) {
            const name = batch.name != null ? batch.name : batch.batch;
            document.querySelectorAll('[data-batch="' + CSS.escape(name) + '"]').forEach((el) => {
              const done = String(batch.states.done || 0);
              setText(el, '[data-field="done"]', done);
              setText(el, '[data-field="failed"]', String(batch.states.failed || 0));
              const bar = el.querySelector('progress[data-field="progress"]');
              if (bar) { bar.max = Math.max(1, batch.total); bar.value = batch.states.done || 0; }
              const states = el.querySelector('[data-field="states"]');
              const shown = batch.shown_states.map((s) => s.state + ' ' + s.count);
              if (states && states.hasAttribute('data-links')) {
                if (states.textContent !== (shown.join(' · ') || '—')) {
                  const parts = [];
                  batch.shown_states.forEach((s, i) => {
                    if (i) parts.push(' · ');
                    const link = document.createElement('a');
                    link.href = location.pathname + '?state=' + encodeURIComponent(s.state);
                    link.className = 'state-' + s.state;
                    link.textContent = s.state + ' ' + s.count;
                    parts.push(link);
                  });
                  states.replaceChildren(...(parts.length ? parts : ['—']));
                }
              } else if (states) {
                setText(el, '[data-field="states"]', shown.join(', '));
              }
              el.querySelectorAll('form[data-confirm]').forEach((form) => {
                const button = form.querySelector('button[data-action]');
                const action = button && batch.actions[button.dataset.action];
                if (!action) return;
                form.dataset.confirm = action.confirm;
                button.disabled = action.touched === 0;
              });
            });
          }

          // A batch's page also shows the batch: asked for beside its transfers.
          async function refreshBatch() {
            const detail = document.querySelector('div[data-batch]');
            if (!detail) return;
            const response = await fetch('/api/batches/' + encodeURIComponent(detail.dataset.batch),
              { credentials: 'same-origin', headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(answerWithin) });
            if (response.ok) updateBatch(await response.json());
          }

          function apply(data) {
            if (Array.isArray(data)) {
              data.forEach((item) => { if (item.shown_states) updateBatch(item); });
              updateRows('data-host', data.filter((item) => item.host != null), 'host', ['running', 'limit', 'queued']);
            } else if (Array.isArray(data.transfers)) {
              data.transfers.forEach((t) => {
                const row = document.querySelector('[data-transfer-id="' + t.id + '"]');
                if (row) updateTransfer(row, t);
              });
              setText(document, '[data-total]', String(data.total));
            } else if (data.states) {
              updateOverview(data);
              updateRows('data-reason', data.failures, 'code', ['count']);
              updateRows('data-host', data.hosts, 'host', ['running', 'limit', 'queued']);
            } else if (data.id != null) {
              const el = document.querySelector('[data-transfer-id="' + data.id + '"]');
              if (el) updateTransfer(el, data);
            }
          }

          // The transfer list polls for the rows it shows (ids=…), so that a row that stops matching
          // the filter (a canceled transfer in a list of downloading ones) still shows its new state.
          function liveURL() {
            const rows = Array.from(document.querySelectorAll('tr[data-transfer-id]')).map((r) => r.dataset.transferId);
            const live = main.dataset.live;
            const isList = live === '/api/transfers' || live.startsWith('/api/transfers?');
            if (!isList || !rows.length) return live;
            return live + (live.includes('?') ? '&' : '?') + 'ids=' + rows.join(',');
          }

          // A lost database (the server answers 503) or a lost dashboard (no answer) shows in the
          // alert at the top of the page, and goes away with the next good answer. The page of an
          // outage (data-outage) reloads itself then.
          function outage(text) {
            let alert = document.getElementById('outage');
            if (!text) {
              if (document.querySelector('[data-outage]')) { location.reload(); return; }
              if (alert) alert.remove();
              return;
            }
            if (!alert) {
              alert = document.createElement('p');
              alert.id = 'outage';
              alert.className = 'outage';
              alert.setAttribute('role', 'alert');
              (main || document.body).prepend(alert);
            }
            if (alert.textContent !== text) alert.textContent = text;
          }

          // A request the dashboard has not answered by then counts as no answer (a hung server
          // shows as an outage too, not as a page that silently stopped).
          const answerWithin = 5000;

          let generation = 0;
          async function poll() {
            timer = null;
            const mine = ++generation;  // a poll asked for meanwhile (pollNow) takes over the schedule
            let wait = 2000;
            if (!document.hidden) {
              try {
                const response = await fetch(liveURL(),
                  { credentials: 'same-origin', headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(answerWithin) });
                if (response.status === 401) { location.href = '/login'; return; }
                const data = await response.json().catch(() => ({}));
                if (response.ok) {
                  outage(null);
                  apply(data);
                  await refreshBatch();
                  wait = Math.min(data.poll_after_ms || wait, 5000);
                } else if (response.status === 503) {
                  outage('The database is unreachable, so this page is not current: ' + (data.error || 'HTTP 503') + '. Retrying…');
                }
              } catch (error) {
                outage('The dashboard does not answer (' + error.message + '), so this page is not current. Retrying…');
              }
            }
            if (mine === generation) timer = setTimeout(poll, wait);
          }
          function pollNow() {
            if (!main) return;
            if (timer) clearTimeout(timer);
            return poll();
          }

          async function post(path, body) {
            try {
              const response = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf }, body });
              const data = await response.json().catch(() => ({}));
              return { ok: response.ok, text: data.message || data.error || 'HTTP ' + response.status };
            } catch (error) {
              return { ok: false, text: 'the dashboard did not answer: ' + error };
            }
          }
          function say(result) {
            if (flash) { flash.textContent = result.text; flash.className = result.ok ? 'ok' : 'error'; }
          }

          // Bulk selection: the checked rows of the page, for the bulk bar's actions.
          function selected() {
            return Array.from(document.querySelectorAll('input[data-select]:checked')).map((box) => box.value);
          }
          function updateSelection() {
            const ids = selected();
            setText(document, '[data-selected-count]', String(ids.length));
            document.querySelectorAll('button[data-bulk-action]').forEach((b) => { b.disabled = ids.length === 0; });
          }
          document.addEventListener('change', (event) => {
            const box = event.target;
            if (box.matches('input[data-select-all]')) {
              document.querySelectorAll('input[data-select]').forEach((other) => { other.checked = box.checked; });
            }
            if (box.matches('input[data-select], input[data-select-all]')) updateSelection();
          });
          document.addEventListener('click', async (event) => {
            const button = event.target.closest('button[data-bulk-action]');
            if (!button) return;
            const ids = selected();
            const action = button.dataset.bulkAction;
            const name = action.charAt(0).toUpperCase() + action.slice(1);
            if (!ids.length || !confirm(name + ' ' + ids.length + ' selected transfer' + (ids.length === 1 ? '' : 's') + '?')) return;
            button.disabled = true;
            const result = await post('/api/bulk/' + action, new URLSearchParams({ ids: ids.join(',') }));
            say(result);
            if (result.ok) {
              document.querySelectorAll('input[data-select], input[data-select-all]').forEach((box) => { box.checked = false; });
              updateSelection();
              pollNow();
            } else {
              button.disabled = false;
            }
          });

          document.addEventListener('submit', async (event) => {
            const form = event.target;
            if (form.method !== 'post' || !new URL(form.action).pathname.startsWith('/api/')) return;
            event.preventDefault();
            // An action on many transfers names how many and asks first; dismissing it sends nothing.
            if (form.dataset.confirm && !confirm(form.dataset.confirm)) return;
            const body = new URLSearchParams(new FormData(form));
            body.delete('return');
            body.delete('csrf');
            const button = form.querySelector('button');
            if (button) button.disabled = true;
            const result = await post(form.action, body);
            say(result);
            if (button) button.disabled = false;
            // The rows, and a batch's counts and questions, show the new state at once (no reload).
            pollNow();
          });

          // Small server-rendered tables (batches, workers, hosts, failures) sort in place: a cell's
          // data-sort-value if it has one, else its text, as numbers when both are numbers.
          document.addEventListener('click', (event) => {
            const th = event.target.closest('table[data-sortable] th[data-sort]');
            if (!th) return;
            const table = th.closest('table');
            const index = Array.from(th.parentNode.children).indexOf(th);
            const ascending = th.getAttribute('aria-sort') !== 'ascending';
            table.querySelectorAll('th[aria-sort]').forEach((h) => h.removeAttribute('aria-sort'));
            th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
            const key = (row) => {
              const cell = row.children[index];
              if (!cell) return '';
              const marked = cell.querySelector('[data-sort-value]');
              return marked ? marked.dataset.sortValue : cell.textContent.trim();
            };
            const body = table.tBodies[0];
            const rows = Array.from(body.rows);
            rows.sort((a, b) => {
              const x = key(a), y = key(b), nx = Number(x), ny = Number(y);
              const order = x !== '' && y !== '' && !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y, undefined, { numeric: true });
              return ascending ? order : -order;
            });
            body.append(...rows);
          });

          if (main) timer = setTimeout(poll, 1000);
        })();
        """#

    /// The tab's icon: without one a browser asks for `/favicon.ico` and logs its 404 as an error.
    static let icon = #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0969da"/><path d="M4 3v10M12 3v10M4 8h8" stroke="#fff" stroke-width="2" fill="none"/></svg>
        """#

    static let stylesheet = #"""
        /* Haul dashboard: one stylesheet, light and dark, 1280 px screens and phones. */
        :root {
          color-scheme: light dark;
          --bg: #ffffff; --fg: #1b1f24; --muted: #59636e; --line: #d1d9e0; --panel: #f6f8fa; --accent: #0969da;
          --done: #1a7f37; --running: #0969da; --queued: #bfc6ce; --failed: #cf222e; --paused: #9a6700;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --panel: #151b23; --accent: #4493f8;
            --done: #3fb950; --running: #4493f8; --queued: #3d444d; --failed: #f85149; --paused: #d29922;
          }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.25rem; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel); }
        header nav { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem .9rem; }
        header a { color: var(--fg); text-decoration: none; }
        header a[aria-current="page"] { color: var(--accent); font-weight: 600; }
        .brand { font-size: 1.1rem; }
        main { padding: 1rem; max-width: 1600px; margin: 0 auto; }
        h1 { font-size: 1.4rem; margin: .2rem 0 1rem; }
        h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
        a { color: var(--accent); }
        .muted, small { color: var(--muted); }
        small { display: block; }
        .wrap { overflow-wrap: anywhere; word-break: break-word; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-weight: 600; color: var(--muted); white-space: nowrap; }
        td.url { min-width: 16rem; max-width: 28rem; }
        .tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: .5rem; }
        .tile { display: block; padding: .6rem .8rem; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); color: var(--fg); text-decoration: none; }
        .tile span { display: block; font-size: 1.5rem; font-weight: 600; }
        .state { font-weight: 600; }
        .state-done, .state-alive { color: var(--done); }
        .state-failed, .state-dead, .err, .error { color: var(--failed); }
        .state-downloading, .state-planning, .state-finalizing { color: var(--running); }
        .state-paused { color: var(--paused); }
        .state-canceled, .state-stopped, .state-pending { color: var(--muted); }
        .segmap { display: inline-flex; flex-wrap: wrap; max-width: 16rem; font: 10px/1 ui-monospace, monospace; }
        .seg { display: inline-block; width: 6px; height: 12px; margin-right: 1px; font-style: normal; color: transparent; overflow: hidden; }
        .seg-done { background: var(--done); } .seg-running { background: var(--running); }
        .seg-queued { background: var(--queued); } .seg-failed { background: var(--failed); }
        progress, meter { width: 8rem; height: .8rem; vertical-align: middle; accent-color: var(--accent); }
        .bytes { display: block; white-space: nowrap; }
        .actions { display: flex; flex-wrap: wrap; gap: .25rem; }
        form.inline { display: inline; margin: 0; }
        button { font: inherit; padding: .2rem .6rem; border: 1px solid var(--line); border-radius: 5px; background: var(--panel); color: var(--fg); cursor: pointer; }
        button:disabled { opacity: .4; cursor: default; }
        button.act-cancel:not(:disabled) { border-color: var(--failed); color: var(--failed); }
        input, select { font: inherit; padding: .2rem .4rem; border: 1px solid var(--line); border-radius: 5px; background: var(--bg); color: var(--fg); }
        input[type="number"] { width: 5rem; }
        .filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: .75rem; }
        .filters label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
        .pager { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; margin: .5rem 0; }
        .windows { margin: .6rem 0 .4rem; color: var(--muted); }
        .windows a, .windows strong { padding: 0 .25rem; }
        .badge { padding: .1rem .5rem; border-radius: 999px; background: var(--paused); color: var(--bg); font-size: .8rem; }
        .logout { margin: 0; }
        .login { display: flex; flex-direction: column; gap: .5rem; max-width: 22rem; }
        #flash:empty { display: none; }
        #flash { padding: .5rem .75rem; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); }
        #flash.error { color: var(--failed); }
        .outage { padding: .5rem .75rem; border-radius: 6px; border: 1px solid var(--failed); color: var(--failed); background: var(--panel); font-weight: 600; }
        .bulk { display: flex; flex-wrap: wrap; gap: .25rem .5rem; align-items: center; margin: .25rem 0; }
        .pages a, .pages strong { padding: 0 .2rem; }
        /* The transfer list: one line a row at 1280 px (a long URL or error is cut: whole in its
           title and on its page; a row shows only the actions its state allows). */
        table.compact { line-height: 1.3; }
        table.compact td, table.compact th { padding: .15rem .3rem; white-space: nowrap; }
        table.compact .actions { display: flex; flex-wrap: nowrap; gap: .2rem; }
        table.compact .actions button:disabled { display: none; }
        table.compact button { padding: 0 .3rem; font-size: .8rem; line-height: 1.25; }
        table.compact .err, table.compact .waiting { font-size: .85rem; max-width: 12rem; }
        table.compact td.url { min-width: 0; max-width: none; }
        table.compact td.url small { display: inline; margin-left: .4rem; }
        table.compact .clip { max-width: 15rem; }
        table.compact .clip, table.compact .err, table.compact .waiting { display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; overflow-wrap: normal; word-break: normal; }
        table.compact progress { width: 2.5rem; height: .5rem; }
        table.compact .bytes { display: inline; margin-left: .3rem; }
        table.compact .segmap { flex-wrap: nowrap; max-width: none; }
        table.compact .seg { width: 1px; }
        th[data-sort] { cursor: pointer; }
        th button.sort { padding: 0; border: 0; background: none; color: inherit; font: inherit; font-weight: 600; }
        th[aria-sort="ascending"]::after { content: " ▲"; }
        th[aria-sort="descending"]::after { content: " ▼"; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 1rem; }
        dl.facts dt { color: var(--muted); }
        dl.facts dd { margin: 0; min-width: 0; }
        .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 0 1.5rem; }
        .chart svg { width: 100%; height: auto; max-height: 240px; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); }
        .chart polyline { fill: none; stroke: var(--accent); stroke-width: 2; vector-effect: non-scaling-stroke; }
        .chart text { fill: var(--muted); font-size: 11px; }
        .chart .axis { stroke: var(--muted); }
        .chart .grid { stroke: var(--line); stroke-dasharray: 3 3; }
        .chart .tick { stroke: var(--muted); }
        .chart .series-1 { stroke: var(--done); } .chart .series-2 { stroke: var(--paused); } .chart .series-3 { stroke: var(--failed); }
        .chart .series-4 { stroke: #8250df; } .chart .series-5 { stroke: var(--muted); }
        .legend { display: flex; flex-wrap: wrap; gap: .2rem 1rem; list-style: none; margin: .3rem 0 0; padding: 0; color: var(--muted); font-size: .85rem; }
        .swatch { display: inline-block; width: .8rem; height: .25rem; margin-right: .3rem; vertical-align: middle; background: var(--accent); }
        .swatch.series-1 { background: var(--done); } .swatch.series-2 { background: var(--paused); } .swatch.series-3 { background: var(--failed); }
        .swatch.series-4 { background: #8250df; } .swatch.series-5 { background: var(--muted); }
        .chart figcaption { color: var(--muted); font-size: .85rem; }
        figure { margin: 0; }
        @media (max-width: 700px) {
          main { padding: .6rem; }
          table[data-sortable] thead { display: none; }
          table[data-sortable] tr { display: block; border-bottom: 1px solid var(--line); padding: .3rem 0; }
          table[data-sortable] td { display: block; border: 0; padding: .1rem .3rem; }
          table[data-sortable] td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
          table[data-sortable] meter, table[data-sortable] progress { width: 6rem; }
          table.transfers thead { display: none; }
          table.transfers tr { display: grid; grid-template-columns: 1fr 1fr; border-bottom: 1px solid var(--line); padding: .4rem 0; }
          table.transfers td { border: 0; padding: .15rem .3rem; }
          table.transfers td.url { grid-column: 1 / -1; min-width: 0; max-width: none; }
          table.transfers td:last-child { grid-column: 1 / -1; }
          table.transfers td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
          dl.facts { grid-template-columns: 1fr; }
          dl.facts dt { margin-top: .4rem; }
        }
        """#
}
