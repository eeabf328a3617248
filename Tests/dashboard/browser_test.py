#!/usr/bin/env python3
"""The operator dashboard in a real headless Chromium (Debian's chromium + chromium-driver, Selenium).

Starts its own database (on the test PostgreSQL), a `haul worker` and `haul dashboard`, then, as an
operator would: logs in with the token; watches a live transfer's bytes grow without a reload (the
nginx /slow/ location); cancels it from the page and checks the database agrees; opens a forged
cross-site page that posts to the dashboard and checks it is refused and nothing changes; checks an
origin-supplied error text with <script> is shown as text; checks that 10 000 transfers are paged on
the server (and prints, without asserting, how long the first render took); takes screenshots at
1280 px and phone width, light and dark, into HAUL_DASHBOARD_SCREENSHOTS (default: a temp folder).

Usage: browser_test.py HAUL_BINARY   (reads HAUL_TEST_DATABASE_URL, HAUL_TEST_ORIGIN, HAUL_TEST_DOCROOT)
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

HAUL = os.path.abspath(sys.argv[1])
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
    live = json.loads(haul("enqueue", ORIGIN + "/slow/" + os.path.basename(live_file), "--dest", "live.bin", "--json"))["id"]

    storage = os.path.join(work, "storage")
    os.makedirs(storage)
    children.append(subprocess.Popen([HAUL, "worker", "--storage", storage, "--poll-interval", "200ms"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "worker.log"), "w")))
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    children.append(subprocess.Popen([HAUL, "dashboard", "--addr", "127.0.0.1:%d" % port], env=dict(env, HAUL_DASHBOARD_TOKEN=TOKEN),
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "dashboard.log"), "w")))
    wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 20, "the dashboard to listen")

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    try:
        browse(driver, base, live, hostile)
    finally:
        driver.quit()


def browse(driver, base, live, hostile):
    wait = WebDriverWait(driver, 30)

    # Log in with the token.
    driver.get(base + "/transfers")
    check(driver.current_url.endswith("/login"), "a stranger is sent to the login form")
    driver.find_element(By.NAME, "token").send_keys(TOKEN)
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()
    wait.until(lambda d: d.current_url == base + "/")
    cookie = driver.get_cookie("haul_session") or {}
    check(cookie.get("httpOnly") is True and cookie.get("sameSite") == "Strict", "the session cookie is HttpOnly and SameSite=Strict")
    check(driver.execute_script("return document.cookie") == "", "scripts cannot read the session cookie")

    # Watch the live transfer's bytes grow without a reload.
    driver.get(base + "/transfers?q=" + "live")
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

    # An origin-supplied error text is shown as text, also after the page polled.
    driver.get(base + "/transfers?state=failed")
    cell = '[data-transfer-id="%d"] [data-field="error"]' % hostile
    check(driver.find_element(By.CSS_SELECTOR, cell).text == HOSTILE, "the hostile error text is shown as text")
    time.sleep(2.5)
    check(driver.find_element(By.CSS_SELECTOR, cell).text == HOSTILE, "and still as text after polling")
    check(driver.execute_script("return window.__xss === undefined"), "no script of the error text ran")
    check(not driver.find_elements(By.CSS_SELECTOR, '[data-transfer-id="%d"] img' % hostile), "no element of the error text exists")

    # 10 000 transfers: paged on the server; the first render is measured and printed, not asserted.
    driver.get(base + "/transfers")
    rows = driver.find_elements(By.CSS_SELECTOR, "tr[data-transfer-id]")
    total = driver.find_element(By.CSS_SELECTOR, "[data-total]").text
    check(len(rows) == 50 and total == "10002", "the page shows 50 of %s transfers (server-side paging)" % total)
    timing = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "const p = performance.getEntriesByName('first-contentful-paint')[0];"
        "return [n.responseStart, n.domContentLoadedEventEnd, p ? p.startTime : null];")
    print("figure: /transfers with 10 002 transfers: first byte %.0f ms, DOM ready %.0f ms, first contentful paint %s ms"
          % (timing[0], timing[1], "%.0f" % timing[2] if timing[2] is not None else "n/a"), flush=True)

    # Screenshots to look at: 1280 px and phone width, light and dark.
    for path, name in (("/", "overview"), ("/transfers?state=failed", "transfers"), ("/transfers/%d" % live, "transfer"), ("/hosts", "hosts"), ("/batches", "batches")):
        driver.get(base + path)
        time.sleep(0.5)
        for width, height in ((1280, 900), (390, 844)):
            for dark in (False, True):
                screenshot(driver, name, width, height, dark)
    print("screenshots in " + shots, flush=True)

    # Nothing the pages do breaks their own Content-Security-Policy, and no script error.
    problems = [entry["message"] for entry in driver.get_log("browser")
                if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]]
    check(not problems, "no CSP violation or script error in the console: %s" % problems[:3])


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
