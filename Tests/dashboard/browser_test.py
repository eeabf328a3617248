#!/usr/bin/env python3
"""The operator dashboard in a real headless Chromium (Debian's chromium + chromium-driver, Selenium).

Starts its own database (on the test PostgreSQL), a `haul worker` and `haul dashboard`, then, as an
operator would: logs in with the token; watches a live transfer's bytes grow without a reload (the
nginx /slow/ location); cancels it from the page and checks the database agrees; opens a forged
cross-site page that posts to the dashboard and checks it is refused and nothing changes; checks an
origin-supplied error text with <script> is shown as text; checks that 10 000 transfers are paged on
the server (and prints, without asserting, how long the first render took); takes screenshots at
1280 px and phone width, light and dark, into HAUL_DASHBOARD_SCREENSHOTS (default: a temp folder).

Round two (issue 54): a batch's page lists its transfers; cancel on a batch asks first (dismissing
changes nothing, accepting cancels all and the page shows it); bulk selection asks first too; an
origin paused at 0 from the Hosts page runs no segment and runs again once resumed; the charts'
axes are labelled, over a chosen window too; pages fit a phone's width; stopping a private PostgreSQL (initdb'd by the test, never the shared one)
shows an alert on the open page within 10 s, and starting it again clears it; so does a
dashboard that hangs (SIGSTOP).

Usage: browser_test.py HAUL_BINARY [STEP...]   (reads HAUL_TEST_DATABASE_URL, HAUL_TEST_ORIGIN, HAUL_TEST_DOCROOT)
With STEP names (see STEPS) only those run, after the login; without, all of them.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import alert_is_present
from selenium.webdriver.support.ui import WebDriverWait

HAUL = os.path.abspath(sys.argv[1])
ONLY = sys.argv[2:]
SERVER_URL = os.environ["HAUL_TEST_DATABASE_URL"]
ORIGIN = os.environ["HAUL_TEST_ORIGIN"]
DOCROOT = os.environ["HAUL_TEST_DOCROOT"]
TOKEN = "browser-test-token"
HOSTILE = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">origin said no'
LIVE_SIZE = 256 << 20

work = tempfile.mkdtemp(prefix="haul-browser-")
shots = os.environ.get("HAUL_DASHBOARD_SCREENSHOTS") or os.path.join(work, "screenshots")
os.makedirs(shots, exist_ok=True)
db_name = "haul_browser_%d" % os.getpid()
db_url = SERVER_URL.rsplit("/", 1)[0] + "/" + db_name
env = dict(os.environ, DATABASE_URL=db_url)
children = []
failures = []


def check(condition, what):
    print(("ok - " if condition else "not ok - ") + what, flush=True)
    if not condition:
        failures.append(what)


def psql(url, sql):
    return subprocess.run(["psql", "-X", "-tA", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def haul(*args):
    result = subprocess.run([HAUL, *args], env=env, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError("haul %s failed: %s" % (" ".join(args), result.stderr))
    return result.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out after %ss waiting for %s" % (timeout, what))


def screenshot(driver, name, width, height, dark):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 700})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
    time.sleep(0.3)
    path = os.path.join(shots, "%s-%d-%s.png" % (name, width, "dark" if dark else "light"))
    driver.save_screenshot(path)
    return path


def main():
    psql(SERVER_URL, "CREATE DATABASE %s" % db_name)
    haul("migrate")
    origin_host = ORIGIN.split("://", 1)[1]
    # One connection to the slow origin at a time: the live transfer stays at nginx's 4 MB/s.
    haul("host-limit", "set", origin_host, "1")
    live_file = os.path.join(DOCROOT, "dash-live-%d.bin" % os.getpid())
    with open(live_file, "wb") as f:
        f.truncate(LIVE_SIZE)
    forge_file = os.path.join(DOCROOT, "dash-forge-%d.html" % os.getpid())
    try:
        run(live_file, forge_file)
    finally:
        for path in (live_file, forge_file):
            if os.path.exists(path):
                os.remove(path)


def run(live_file, forge_file):
    # Transfers the worker never sees: 10 000 paused ones (paging) and one failed with a hostile error.
    manifest = os.path.join(work, "manifest.txt")
    with open(manifest, "w") as f:
        f.write("\n".join("http://127.0.0.1:9/f%d.bin f/%d.bin" % (n, n) for n in range(10000)))
    haul("enqueue", "--manifest", manifest, "--batch", "big")
    psql(db_url, "UPDATE transfers SET state = 'paused', paused_from = 'pending'")
    hostile = json.loads(haul("enqueue", "http://127.0.0.1:9/hostile.bin", "--json"))["id"]
    psql(db_url, "UPDATE transfers SET state = 'failed', error_code = 'http-status', error = $$%s$$ WHERE id = %d" % (HOSTILE, hostile))

    storage = os.path.join(work, "storage")
    os.makedirs(storage)
    children.append(subprocess.Popen([HAUL, "worker", "--storage", storage, "--poll-interval", "200ms"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "worker.log"), "w")))
    base = start_dashboard(env, "dashboard.log")

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    context = {"base": base, "hostile": hostile, "live_file": live_file, "forge_file": forge_file}
    try:
        log_in(driver, base)
        for name, step in STEPS:
            if not ONLY or name in ONLY:
                print("# " + name, flush=True)
                step(driver, context)
        check_console(driver)
    finally:
        driver.quit()


def start_dashboard(environment, log):
    port = free_port()
    children.append(subprocess.Popen([HAUL, "dashboard", "--addr", "127.0.0.1:%d" % port], env=dict(environment, HAUL_DASHBOARD_TOKEN=TOKEN),
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, log), "w")))
    wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 20, "the dashboard to listen")
    return "http://127.0.0.1:%d" % port


def log_in(driver, base):
    driver.get(base + "/transfers")
    check(driver.current_url.endswith("/login"), "a stranger is sent to the login form")
    driver.find_element(By.NAME, "token").send_keys(TOKEN)
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()
    WebDriverWait(driver, 30).until(lambda d: d.current_url == base + "/")
    cookie = driver.get_cookie("haul_session") or {}
    check(cookie.get("httpOnly") is True and cookie.get("sameSite") == "Strict", "the session cookie is HttpOnly and SameSite=Strict")
    check(driver.execute_script("return document.cookie") == "", "scripts cannot read the session cookie")


def live_and_cancel(driver, context):
    base = context["base"]
    wait = WebDriverWait(driver, 30)
    live = json.loads(haul("enqueue", ORIGIN + "/slow/" + os.path.basename(context["live_file"]), "--dest", "live.bin", "--json"))["id"]
    context["live"] = live

    # Watch the live transfer's bytes grow without a reload.
    driver.get(base + "/transfers?state=downloading")
    row_selector = '[data-transfer-id="%d"]' % live
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, row_selector) or driver.refresh(), 60, "the live transfer to be downloading")
    driver.execute_script("window.__noReload = 'still here'")
    def bytes_done():
        return int(driver.find_element(By.CSS_SELECTOR, row_selector + " [data-bytes-done]").get_attribute("data-bytes-done"))
    first = bytes_done()
    second = wait_for(lambda: bytes_done() > first and bytes_done(), 30, "bytes done to grow")
    third = wait_for(lambda: bytes_done() > second and bytes_done(), 30, "bytes done to grow again")
    check(driver.execute_script("return window.__noReload") == "still here", "bytes grew %d → %d → %d without a reload" % (first, second, third))
    check(third < LIVE_SIZE, "the transfer is still running when we cancel it")
    screenshot(driver, "transfers-live", 1280, 900, False)

    # Cancel it from the page; the row and the database agree.
    driver.find_element(By.CSS_SELECTOR, row_selector + ' button[data-action="cancel"]').click()
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, row_selector).get_attribute("data-state") == "canceled")
    check(psql(db_url, "SELECT state FROM transfers WHERE id = %d" % live) == "canceled", "the database says canceled, as the row does")
    check("cancel done" in driver.find_element(By.ID, "flash").text, "the page says the cancel was done")
    check(not driver.find_element(By.CSS_SELECTOR, row_selector + ' button[data-action="cancel"]').is_enabled(),
          "a canceled transfer's cancel button is disabled")
    check(driver.execute_script("return window.__noReload") == "still here", "the cancel did not reload the page")


def forged_post(driver, context):
    base = context["base"]
    wait = WebDriverWait(driver, 30)
    # A forged cross-site POST (another origin's page auto-submitting a form) is refused.
    victim = int(psql(db_url, "SELECT min(id) FROM transfers WHERE state = 'paused'"))
    with open(forge_file_path(), "w") as f:
        f.write('<!doctype html><form id="f" method="post" action="%s/api/transfers/%d/resume">'
                '<input name="csrf" value="guessed"><input name="return" value="/"></form>'
                '<script>document.getElementById("f").submit()</script>' % (base, victim))
    driver.get(ORIGIN + "/" + os.path.basename(forge_file_path()))
    wait.until(lambda d: d.current_url.startswith(base))
    body = driver.find_element(By.TAG_NAME, "body").text
    check("cross-site request refused" in body, "the forged POST is refused: %r" % body[:120])
    check(psql(db_url, "SELECT state FROM transfers WHERE id = %d" % victim) == "paused", "the forged POST changed nothing")


def hostile_text(driver, context):
    hostile = context["hostile"]
    # An origin-supplied error text is shown as text, also after the page polled.
    driver.get(context["base"] + "/transfers?state=failed")
    cell = '[data-transfer-id="%d"] [data-field="error"]' % hostile
    check(driver.find_element(By.CSS_SELECTOR, cell).text == HOSTILE, "the hostile error text is shown as text")
    time.sleep(2.5)
    check(driver.find_element(By.CSS_SELECTOR, cell).text == HOSTILE, "and still as text after polling")
    check(driver.execute_script("return window.__xss === undefined"), "no script of the error text ran")
    check(not driver.find_elements(By.CSS_SELECTOR, '[data-transfer-id="%d"] img' % hostile), "no element of the error text exists")


def paging(driver, context):
    # 10 000 transfers: paged on the server; the first render is measured and printed, not asserted.
    driver.get(context["base"] + "/transfers")
    rows = driver.find_elements(By.CSS_SELECTOR, "tr[data-transfer-id]")
    total = driver.find_element(By.CSS_SELECTOR, "[data-total]").text
    expected = psql(db_url, "SELECT count(*) FROM transfers")
    check(len(rows) == 50 and total == expected, "the page shows 50 of %s transfers (server-side paging)" % total)
    check(driver.find_elements(By.CSS_SELECTOR, '.pager a[data-page-link="2"]'), "the pager links page numbers")
    # A compact table, a line a row: scrolled to its first row, a 1280×900 window shows at least 25 whole rows (7 before round two, 15 before this).
    driver.execute_script("document.querySelector('tr[data-transfer-id]').scrollIntoView()")
    shown = driver.execute_script("return Array.from(document.querySelectorAll('tr[data-transfer-id]'))"
                                  ".filter((r) => { const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= innerHeight; }).length")
    check(shown >= 25, "a compact table: %d whole rows in a 1280×900 window" % shown)
    width = driver.execute_script("const box = document.querySelector('table.transfers').parentNode; return [box.scrollWidth, box.clientWidth]")
    check(width[0] <= width[1], "and its rows fit 1280 px, failed and running ones too (%d of %d px)" % tuple(width))
    screenshot(driver, "transfers-compact", 1280, 900, False)
    timing = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "const p = performance.getEntriesByName('first-contentful-paint')[0];"
        "return [n.responseStart, n.domContentLoadedEventEnd, p ? p.startTime : null];")
    print("figure: /transfers with %s transfers: first byte %.0f ms, DOM ready %.0f ms, first contentful paint %s ms"
          % (expected, timing[0], timing[1], "%.0f" % timing[2] if timing[2] is not None else "n/a"), flush=True)


def paused_batch(name, count):
    """A batch of `count` transfers the worker never runs (paused, to an address nothing answers)."""
    manifest = os.path.join(work, "%s.txt" % name)
    with open(manifest, "w") as f:
        f.write("\n".join("http://127.0.0.1:9/%s-%d.bin %s/%d.bin" % (name, n, name, n) for n in range(count)))
    haul("enqueue", "--manifest", manifest, "--batch", name)
    psql(db_url, "UPDATE transfers SET state = 'paused', paused_from = 'pending' WHERE batch_id = (SELECT id FROM batches WHERE name = '%s')" % name)


def batch_states(name):
    return psql(db_url, "SELECT string_agg(DISTINCT state, ',') FROM transfers WHERE batch_id = (SELECT id FROM batches WHERE name = '%s')" % name)


def batch_page(driver, context):
    base = context["base"]
    paused_batch("nightly", 7)
    driver.get(base + "/batches")
    def names():
        return [row.get_attribute("data-batch") for row in driver.find_elements(By.CSS_SELECTOR, "tr[data-batch]")]
    heading = driver.find_element(By.CSS_SELECTOR, "th[data-sort] button")
    heading.click()
    check(names() == sorted(names()), "the batches sort by name: %s" % names())
    heading.click()
    check(names() == sorted(names(), reverse=True), "and back: %s" % names())
    link = driver.find_element(By.CSS_SELECTOR, 'tr[data-batch="nightly"] a[href="/batches/nightly"]')
    link.click()
    WebDriverWait(driver, 30).until(lambda d: d.current_url == base + "/batches/nightly")
    rows = driver.find_elements(By.CSS_SELECTOR, "tr[data-transfer-id]")
    check(len(rows) == 7, "the batch's page lists its 7 transfers (%d rows)" % len(rows))
    check("0 of 7 done" in driver.find_element(By.CSS_SELECTOR, "[data-batch] dl").text, "and its progress")
    driver.get(base + "/batches/nightly?per=3&page=2")
    check(len(driver.find_elements(By.CSS_SELECTOR, "tr[data-transfer-id]")) == 3, "its transfers are paged")
    driver.get(base + "/batches/nightly?q=nightly-4.bin")
    check(len(driver.find_elements(By.CSS_SELECTOR, "tr[data-transfer-id]")) == 1, "and filtered")
    driver.get(base + "/batches/no-such-batch")
    check("There is no batch no-such-batch." in driver.find_element(By.TAG_NAME, "body").text, "a batch that does not exist is said so")


def batch_confirm(driver, context):
    base = context["base"]
    wait = WebDriverWait(driver, 30)
    paused_batch("weekly", 5)
    driver.get(base + "/batches")
    button = '[data-batch="weekly"] button[data-action="cancel"]'
    driver.find_element(By.CSS_SELECTOR, button).click()
    alert = wait.until(alert_is_present())
    check("Cancel 5 transfers of batch weekly?" == alert.text, "cancel on a batch asks first, naming how many: %r" % alert.text)
    alert.dismiss()
    time.sleep(1)
    check(batch_states("weekly") == "paused", "dismissing it changes nothing")

    driver.get(base + "/batches/weekly")
    driver.execute_script("window.__before = 1")
    driver.find_element(By.CSS_SELECTOR, button).click()
    wait.until(alert_is_present()).accept()
    wait.until(lambda d: "cancel done" in d.find_element(By.ID, "flash").text)
    check(batch_states("weekly") == "canceled", "accepting cancels all of the batch")
    wait.until(lambda d: {row.get_attribute("data-state") for row in d.find_elements(By.CSS_SELECTOR, "tr[data-transfer-id]")} == {"canceled"})
    check("canceled 5" in driver.find_element(By.CSS_SELECTOR, 'div[data-batch="weekly"] [data-field="states"]').text, "the page shows them canceled")
    check(not driver.find_element(By.CSS_SELECTOR, button).is_enabled(), "and its Cancel has nothing left to cancel")
    check(driver.execute_script("return window.__before") == 1, "without a reload")
    check("cancel done for 5 transfers" in driver.find_element(By.ID, "flash").text, "the page says what was done")

    # On the list of batches too: the row shows the new state once the action is done, in place.
    paused_batch("monthly", 4)
    driver.get(base + "/batches")
    driver.execute_script("window.__before = 1")
    row = driver.find_element(By.CSS_SELECTOR, 'tr[data-batch="monthly"]')
    row.find_element(By.CSS_SELECTOR, 'button[data-action="cancel"]').click()
    alert = wait.until(alert_is_present())
    check(alert.text == "Cancel 4 transfers of batch monthly?", "the list asks too: %r" % alert.text)
    alert.accept()
    wait.until(lambda d: "canceled 4" in row.find_element(By.CSS_SELECTOR, '[data-field="states"]').text)
    check(batch_states("monthly") == "canceled", "accepting on the list cancels all of the batch")
    check(driver.execute_script("return window.__before") == 1, "and its row shows it without a reload")
    check(not row.find_element(By.CSS_SELECTOR, 'button[data-action="cancel"]').is_enabled()
          and row.find_element(By.CSS_SELECTOR, 'button[data-action="retry"]').is_enabled(), "its buttons follow: Retry now, no Cancel")
    row.find_element(By.CSS_SELECTOR, 'button[data-action="retry"]').click()
    alert = wait.until(alert_is_present())
    check(alert.text == "Retry 4 transfers of batch monthly?", "the next question counts what the batch is now: %r" % alert.text)
    alert.dismiss()

    # Bulk selection: two rows of a batch, cancel selected, asked first too.
    paused_batch("picked", 3)
    driver.get(base + "/batches/picked")
    boxes = driver.find_elements(By.CSS_SELECTOR, "input[data-select]")
    boxes[0].click()
    boxes[1].click()
    picked = {boxes[0].get_attribute("value"), boxes[1].get_attribute("value")}
    driver.find_element(By.CSS_SELECTOR, 'button[data-bulk-action="cancel"]').click()
    alert = wait.until(alert_is_present())
    check(alert.text == "Cancel 2 selected transfers?", "a bulk cancel asks first: %r" % alert.text)
    alert.dismiss()
    time.sleep(1)
    check(batch_states("picked") == "paused", "dismissing it changes nothing")
    driver.execute_script("window.__before = 1")
    driver.find_element(By.CSS_SELECTOR, 'button[data-bulk-action="cancel"]').click()
    wait.until(alert_is_present()).accept()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, 'tr[data-state="canceled"]')) == 2)
    check(driver.execute_script("return window.__before") == 1, "the rows show it without a reload")
    check("canceled 2" in driver.find_element(By.CSS_SELECTOR, 'div[data-batch="picked"] [data-field="states"]').text, "and so do the batch's counts")
    canceled = set(psql(db_url, "SELECT id FROM transfers WHERE state = 'canceled' AND batch_id = (SELECT id FROM batches WHERE name = 'picked')").split())
    check(canceled == picked, "accepting cancels the selected transfers, and only them")


def bulk_actions(driver, context):
    """Every bulk action of the selection: pause, resume, cancel and retry, each asked first and shown in place."""
    wait = WebDriverWait(driver, 30)
    haul("host-limit", "set", "127.0.0.1:9", "0")  # nothing of the batch runs meanwhile: each state stays until the next action
    try:
        manifest = os.path.join(work, "bulk.txt")
        with open(manifest, "w") as f:
            f.write("\n".join("http://127.0.0.1:9/bulk-%d.bin bulk/%d.bin" % (n, n) for n in range(3)))
        haul("enqueue", "--manifest", manifest, "--batch", "bulk")
        driver.get(context["base"] + "/batches/bulk")
        driver.execute_script("window.__before = 1")
        for action, after in (("pause", "paused"), ("resume", "pending"), ("cancel", "canceled"), ("retry", "pending")):
            driver.find_element(By.CSS_SELECTOR, "input[data-select-all]").click()
            driver.find_element(By.CSS_SELECTOR, 'button[data-bulk-action="%s"]' % action).click()
            alert = wait.until(alert_is_present())
            check(alert.text == "%s 3 selected transfers?" % action.capitalize(), "%s selected asks first: %r" % (action, alert.text))
            alert.accept()
            wait.until(lambda d: {row.get_attribute("data-state") for row in d.find_elements(By.CSS_SELECTOR, "tr[data-transfer-id]")} == {after})
            check(batch_states("bulk") == after, "%s selected: the three are %s, on the page and in the database" % (action, after))
        check(driver.execute_script("return window.__before") == 1, "all without a reload")
    finally:
        haul("host-limit", "resume", "127.0.0.1:9")


def origin_pause(driver, context):
    base = context["base"]
    wait = WebDriverWait(driver, 30)
    host = ORIGIN.split("://", 1)[1]
    small = os.path.join(DOCROOT, "dash-pause-%d.bin" % os.getpid())
    with open(small, "wb") as f:
        f.write(os.urandom(1 << 20))
    try:
        driver.get(base + "/hosts")
        driver.find_element(By.CSS_SELECTOR, 'tr[data-host="%s"] button[data-action="pause-origin"]' % host).click()
        wait.until(lambda d: "paused" in d.find_element(By.ID, "flash").text)
        check(psql(db_url, "SELECT max_running FROM origin_hosts WHERE host = '%s'" % host) == "0", "Pause origin sets its limit to 0")
        paused = json.loads(haul("enqueue", ORIGIN + "/" + os.path.basename(small), "--dest", "paused.bin", "--json"))["id"]
        time.sleep(3)  # fifteen of the worker's polls
        check(psql(db_url, "SELECT state FROM transfers WHERE id = %d" % paused) == "pending"
              and psql(db_url, "SELECT count(*) FROM segments WHERE transfer_id = %d" % paused) == "0",
              "a transfer of the paused origin runs no segment")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-host="%s"] [data-field="paused"]' % host))
        check(driver.find_elements(By.CSS_SELECTOR, 'tr[data-host="%s"] button[data-action="resume-origin"]' % host),
              "the Hosts page says it is paused, and offers to resume it, without a reload")
        driver.get(base + "/hosts")
        check(driver.find_elements(By.CSS_SELECTOR, 'tr[data-host="%s"] [data-field="paused"]' % host), "the Hosts page says it is paused")
        driver.find_element(By.CSS_SELECTOR, 'tr[data-host="%s"] button[data-action="resume-origin"]' % host).click()
        wait.until(lambda d: "resumed" in d.find_element(By.ID, "flash").text)
        wait_for(lambda: psql(db_url, "SELECT state FROM transfers WHERE id = %d" % paused) == "done", 60, "the transfer to be done once resumed")
        check(psql(db_url, "SELECT max_running FROM origin_hosts WHERE host = '%s'" % host) == "1", "Resume gives back the limit it had")
    finally:
        os.remove(small)


def charts(driver, context):
    # A file fetched in this minute, so that every chart has something to draw.
    small = os.path.join(DOCROOT, "dash-chart-%d.bin" % os.getpid())
    with open(small, "wb") as f:
        f.write(os.urandom(2 << 20))
    try:
        fetched = json.loads(haul("enqueue", ORIGIN + "/" + os.path.basename(small), "--dest", "chart.bin", "--json"))["id"]
        wait_for(lambda: psql(db_url, "SELECT state FROM transfers WHERE id = %d" % fetched) == "done", 60, "the chart's file to be done")
        wait_for(lambda: psql(db_url, "SELECT coalesce(sum(bytes), 0) FROM worker_throughput") != "0", 30, "a heartbeat to record the bytes")
    finally:
        os.remove(small)
    # A worker that received 900 KiB/s five minutes ago: the y axis goes up to its widest labels (1000.0 KiB/s).
    psql(db_url, "INSERT INTO worker_throughput VALUES ('chart-wide', date_trunc('minute', now()) - interval '5 minutes', %d)" % (900 * 1024 * 60))
    driver.get(context["base"] + "/")
    labels = [el.text for el in driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart-kind="throughput"] [data-axis] text')]
    check(any(label.endswith("/s") and label != "0 B/s" for label in labels) and "now" in labels and "−30 min" in labels
          and "bytes/s" in labels and "minutes ago (1 point a minute)" in labels,
          "the throughput chart's axes are labelled, with units: %s" % labels)
    queue = driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart-kind="queue"] polyline')
    check(len(queue) == 2 and queue[0].get_attribute("points"), "the overview charts pending and downloading transfers over time")
    overlaps = driver.execute_script(
        "const svg = document.querySelector('svg[data-chart-kind=\"throughput\"]');"
        "const title = Array.from(svg.querySelectorAll('text.axis-title')).find((t) => t.textContent === 'bytes/s').getBoundingClientRect();"
        "return Array.from(svg.querySelectorAll('text:not(.axis-title)')).filter((t) => {"
        "  const r = t.getBoundingClientRect(); return r.left < title.right && title.left < r.right && r.top < title.bottom && title.top < r.bottom;"
        "}).map((t) => t.textContent);")
    check(not overlaps, "the y axis's title overlaps none of its values: %s" % overlaps)
    # A chosen window: 6 hours, one point per 5 minutes.
    driver.find_element(By.CSS_SELECTOR, 'a[data-window="6h"]').click()
    WebDriverWait(driver, 30).until(lambda d: d.current_url.endswith("/?window=6h"))
    labels = [el.text for el in driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart-kind="throughput"] [data-axis] text')]
    headings = [el.text for el in driver.find_elements(By.TAG_NAME, "h2")]
    check("−3 h" in labels and "time ago (1 point per 5 minutes)" in labels and any(label.endswith("/s") and label != "0 B/s" for label in labels)
          and "Bytes per second, last 6 hours" in headings, "the charts show a chosen window, 6 hours: %s" % labels)
    points = driver.find_element(By.CSS_SELECTOR, '[data-chart="throughput"]').get_attribute("points").split()
    check(len(points) == 72, "one point per 5 minutes (%d points)" % len(points))
    time.sleep(2.5)  # a poll of the overview's twin for that window
    check(len(driver.find_element(By.CSS_SELECTOR, '[data-chart="throughput"]').get_attribute("points").split()) == 72, "and still after polling")
    for path, kind in (("/hosts", "hosts"), ("/workers", "workers")):
        driver.get(context["base"] + path)
        lines = driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart-kind="%s"] polyline' % kind)
        axis = [el.text for el in driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart-kind="%s"] [data-axis] text' % kind)]
        check(lines and "bytes/s" in axis and "now" in axis, "%s has a throughput chart per %s with labelled axes" % (path, kind[:-1]))
        driver.get(context["base"] + path + "?window=24h")
        axis = [el.text for el in driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart-kind="%s"] [data-axis] text' % kind)]
        check("−18 h" in axis, "and over a chosen 24 hours: %s" % axis)


def phone(driver, context):
    # At a phone's width no page is wider than the screen, and a batch's or an origin's buttons are on it.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        for path, button in (("/batches", 'tr[data-batch] button[data-action="cancel"]'), ("/hosts", 'tr[data-host] button[data-action$="-origin"]'),
                             ("/", None), ("/transfers", None), ("/workers", None)):
            driver.get(context["base"] + path)
            width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            check(width[0] <= width[1], "%s fits a phone's width (%d of %d px)" % (path, width[0], width[1]))
            if button:
                right = driver.execute_script("return document.querySelector(arguments[0]).getBoundingClientRect().right", button)
                check(right <= width[1], "%s: its buttons are on the screen (right edge %d px)" % (path, right))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def outage(driver, context):
    """A private PostgreSQL the test starts itself: stopped, then started again."""
    server = PrivatePostgres()
    try:
        url = server.database()
        base = start_dashboard(dict(env, DATABASE_URL=url), "dashboard-outage.log")
        log_in(driver, base)
        driver.get(base + "/batches")
        check(not driver.find_elements(By.CSS_SELECTOR, '[role="alert"]'), "no alert while the database answers")
        server.stop()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, '[role="alert"]'), 10, "the alert within 10 s of the database stopping")
        text = driver.find_element(By.CSS_SELECTOR, '[role="alert"]').text
        check("database" in text, "the open page says the database is unreachable: %r" % text[:100])
        driver.get(base + "/transfers")
        check(driver.title.startswith("Database unreachable") and driver.find_elements(By.CSS_SELECTOR, '[role="alert"]'),
              "a fresh load during it gives the dashboard's own error page: %r" % driver.title)
        screenshot(driver, "outage", 1280, 500, False)
        server.start()
        wait_for(lambda: not driver.find_elements(By.CSS_SELECTOR, '[role="alert"]'), 20, "the alert to clear once the database is back")
        check(driver.title.startswith("Transfers"), "the error page turns into the page asked for: %r" % driver.title)
    finally:
        server.remove()


def hung(driver, context):
    """A dashboard that stops answering (stopped with SIGSTOP) shows on the open page too."""
    base = start_dashboard(env, "dashboard-hung.log")
    dashboard = children[-1]
    log_in(driver, base)
    driver.get(base + "/transfers")
    try:
        os.kill(dashboard.pid, signal.SIGSTOP)
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, '[role="alert"]'), 15, "the alert within 15 s of the dashboard hanging")
        text = driver.find_element(By.CSS_SELECTOR, '[role="alert"]').text
        check("does not answer" in text, "a hung dashboard shows as an alert: %r" % text[:100])
    finally:
        os.kill(dashboard.pid, signal.SIGCONT)
    wait_for(lambda: not driver.find_elements(By.CSS_SELECTOR, '[role="alert"]'), 20, "the alert to clear once it answers")


class PrivatePostgres:
    """A PostgreSQL cluster of this test's own (initdb as `postgres`, own port), as the Swift suite's PrivatePostgres."""

    def __init__(self):
        versions = sorted(int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit())
        self.bin = "/usr/lib/postgresql/%d/bin" % versions[-1]
        self.root = tempfile.mkdtemp(prefix="haul-browser-pg-")
        self.port = free_port()
        shutil.chown(self.root, "postgres")
        os.chmod(self.root, 0o700)
        self.run("initdb", "-D", self.root + "/data", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions", "--no-sync")
        self.start()

    def run(self, program, *arguments):
        subprocess.run(["runuser", "-u", "postgres", "--", self.bin + "/" + program, *arguments], check=True, capture_output=True)

    def start(self):
        self.run("pg_ctl", "-D", self.root + "/data", "-l", self.root + "/server.log", "-w", "-t", "60", "-o",
                 "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off" % (self.port, self.root), "start")

    def stop(self):
        self.run("pg_ctl", "-D", self.root + "/data", "-m", "immediate", "-w", "stop")

    def database(self):
        url = "postgresql://postgres@127.0.0.1:%d/haul" % self.port
        psql("postgresql://postgres@127.0.0.1:%d/postgres" % self.port, "CREATE DATABASE haul")
        subprocess.run([HAUL, "migrate"], env=dict(env, DATABASE_URL=url), check=True, capture_output=True)
        return url

    def remove(self):
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)


def screenshots(driver, context):
    # Screenshots to look at: 1280 px and phone width, light and dark.
    pages = [("/", "overview"), ("/transfers?state=failed", "transfers"), ("/hosts", "hosts"), ("/batches", "batches")]
    if "live" in context:
        pages.append(("/transfers/%d" % context["live"], "transfer"))
    if psql(db_url, "SELECT count(*) FROM batches WHERE name = 'nightly'") == "1":
        pages.append(("/batches/nightly", "batch"))
    for path, name in pages:
        driver.get(context["base"] + path)
        time.sleep(0.5)
        for width, height in ((1280, 900), (390, 844)):
            for dark in (False, True):
                screenshot(driver, name, width, height, dark)
    print("screenshots in " + shots, flush=True)


def quiet(driver, context):
    # The pages load without an error in the console: no request answered 404 (a missing icon), no script error.
    driver.get_log("browser")
    for path in ("/", "/transfers", "/batches", "/workers", "/hosts"):
        driver.get(context["base"] + path)
        time.sleep(0.5)
        errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        check(not errors, "%s loads without an error in the console: %s" % (path, errors[:2]))


def check_console(driver):
    # Nothing the pages do breaks their own Content-Security-Policy, and no script error.
    problems = [entry["message"] for entry in driver.get_log("browser")
                if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]]
    check(not problems, "no CSP violation or script error in the console: %s" % problems[:3])


STEPS = [("quiet", quiet), ("live", live_and_cancel), ("forged-post", forged_post), ("hostile-text", hostile_text), ("paging", paging),
         ("batch-page", batch_page), ("batch-confirm", batch_confirm), ("bulk-actions", bulk_actions), ("origin-pause", origin_pause), ("charts", charts),
         ("phone", phone), ("screenshots", screenshots), ("outage", outage), ("hung", hung)]


def forge_file_path():
    return os.path.join(DOCROOT, "dash-forge-%d.html" % os.getpid())


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # a step that timed out or crashed fails the test with its reason
        failures.append("%s: %s" % (type(error).__name__, error))
        print("not ok - %s" % failures[-1], flush=True)
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
        try:
            psql(SERVER_URL, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % db_name)
        except subprocess.CalledProcessError:
            pass
        if failures:
            for name in ("worker.log", "dashboard.log"):
                path = os.path.join(work, name)
                if os.path.exists(path):
                    print("--- %s (last lines)\n%s" % (name, "".join(open(path).readlines()[-20:])))
        if not os.environ.get("HAUL_DASHBOARD_SCREENSHOTS"):
            shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures) if failures else "all passed")
    sys.exit(1 if failures else 0)
