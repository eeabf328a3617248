#!/usr/bin/env python3
"""A small fault-injecting HTTP origin for Haul's reliability tests (standard library only).

One file on purpose, past 400 lines: the tests start it as a single script with no package to
install, and every fault shares the one request handler and its pacing.

Binds 127.0.0.1 on a free port and prints `PORT <n>` on its first line of output.

A test first creates a resource, then points `haul` at it:

    GET /_create?path=/t/file.bin&size=3145728&reset_at=100000   -> JSON stats (sha256 and sha512 of each version)
    GET /t/file.bin                                               -> the file, with the faults asked for
    GET /_stats?path=/t/file.bin                                  -> JSON: request count and log, versions
    GET /_heal?path=/t/file.bin                                   -> switch every fault off (rate stays)

The file is deterministic (seeded by path and version), has a strong ETag and a
Last-Modified, and honours Range / If-Range like a real server (single ranges;
206 with Content-Range, 416 past the end, 200 when If-Range does not match).

Faults (query parameters of /_create). Each fault F applies to the requests
numbered F_after < n <= F_after + F_times (requests to that path, counted from 1);
F_after defaults to 0 and F_times to "every request" unless said otherwise.

    rate=BPS                 throttle every body to BPS bytes per second (not a fault; heal keeps it)
    reset_at=B               send B body bytes, then reset the connection (RST)     reset_times default 1
    short_at=B               announce the full length, send B bytes, then close     short_times default 1
    stall_at=B               send B body bytes, then send nothing for stall_secs (default 60) seconds
                             before going on                                         stall_times default 1
    shift=D                  answer ranged requests that do not start at byte 0 with a
                             Content-Range (and body) shifted by D bytes
    shift_past_end=D         answer the first ranged request (shift_past_end_times of them) whose
                             range shifted by D bytes would end past the file's end with that
                             Content-Range, not clamped (`bytes 3149824-3215359/3211264`), and the
                             body from the shifted start to the end of the file
    norange_after=N          after N requests, ignore Range and answer 200 with the whole file
    replace_after=N          after N requests the file is replaced (new content, ETag, Last-Modified;
                             size replace_size if given)
    replace_every=N          a new version every N requests (the file keeps changing)
    resize_after=N           after N requests the content and size (resize_size) change but the
                             ETag and Last-Modified stay (a broken server)
    status=CODE              answer CODE (with Retry-After: retry_after when given)   status_times default all
    link=TEXT, digest=TEXT   send a Link (RFC 6249 mirrors) or Digest header with the file (not faults)
    redirect=1               answer every request for the file with a 302 to the same path with
                             `/_to` in front (served like the file itself); a status fault then
                             strikes the redirected request, as on a CDN behind a redirect

Quirks of real servers (not counted as faults; heal keeps them):

    validators=LIST          which validators to send: etag,last-modified (default), last-modified, none
    ignore_if_range=1        answer a range with 206 whatever If-Range says (many origins and caches do)
    type=TYPE                the Content-Type of the file (default application/octet-stream; none: no header)
    bare_416=1               an unsatisfiable range gets a bare 416, no Content-Range (e.g. the
                             answer of some servers for any range of an empty file)
"""
import email.utils
import hashlib
import json
import os
import random
import select
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

FOREVER = 10**9
RESOURCES = {}
RESOURCES_LOCK = threading.Lock()


class Version:
    def __init__(self, path, number, size, etag=None, last_modified=None):
        rng = random.Random("%s#%d" % (path, number))
        self.data = rng.randbytes(size) if size > 0 else b""
        self.size = size
        self.number = number
        self.sha256 = hashlib.sha256(self.data).hexdigest()
        self.sha512 = hashlib.sha512(self.data).hexdigest()
        tag = hashlib.sha1(("%s#%d" % (path, number)).encode()).hexdigest()[:16]
        self.etag = etag or '"%s"' % tag
        self.last_modified = last_modified or email.utils.formatdate(1_700_000_000 + number * 86400, usegmt=True)

    def describe(self):
        return {"number": self.number, "size": self.size, "sha256": self.sha256, "sha512": self.sha512, "etag": self.etag, "last_modified": self.last_modified}


class Resource:
    def __init__(self, path, params):
        self.path = path
        self.params = params
        self.lock = threading.Lock()
        self.count = 0
        self.healed = False
        self.log = []
        self.used = {}  # faults limited by how often they struck, not by request numbers
        size = self.int("size", 1 << 20)
        self.versions = [Version(path, 0, size)]
        self.current = 0
        # Versions known in advance, so tests can expect their digests.
        if "replace_after" in params:
            self.versions.append(Version(path, 1, self.int("replace_size", size)))
        elif "resize_after" in params:
            first = self.versions[0]
            self.versions.append(Version(path, 1, self.int("resize_size", size + 4096), etag=first.etag, last_modified=first.last_modified))

    def int(self, name, default=0):
        value = self.params.get(name)
        return int(value) if value is not None else default

    def active(self, fault, number, default_times=FOREVER):
        if self.healed or fault not in self.params:
            return False
        after = self.int(fault + "_after", 0)
        times = self.int(fault + "_times", default_times)
        return after < number <= after + times

    def take(self, fault):
        """Whether `fault` may strike once more (F_times of them, default 1), counting this one."""
        with self.lock:
            if self.healed or fault not in self.params or self.used.get(fault, 0) >= self.int(fault + "_times", 1):
                return False
            self.used[fault] = self.used.get(fault, 0) + 1
            return True

    def next_number(self):
        """Counts a request and moves the file to the version it sees."""
        with self.lock:
            self.count += 1
            n = self.count
            if not self.healed:
                if "replace_after" in self.params and n > self.int("replace_after"):
                    self.current = 1
                elif "resize_after" in self.params and n > self.int("resize_after"):
                    self.current = 1
                elif "replace_every" in self.params:
                    wanted = (n - 1) // self.int("replace_every")
                    while len(self.versions) <= wanted:
                        self.versions.append(Version(self.path, len(self.versions), self.versions[0].size))
                    self.current = wanted
            return n, self.versions[self.current]

    def stats(self):
        with self.lock:
            return {
                "path": self.path,
                "count": self.count,
                "healed": self.healed,
                "current": self.current,
                "versions": [v.describe() for v in self.versions],
                "requests": [dict(entry) for entry in self.log],
            }


def parse_range(header, size):
    """(first, last) inclusive for a single byte range, 'unsatisfiable', or None (serve all)."""
    if not header or not header.startswith("bytes=") or "," in header:
        return None
    spec = header[6:].strip()
    first_text, _, last_text = spec.partition("-")
    try:
        if first_text == "":
            suffix = int(last_text)
            if suffix == 0:
                return "unsatisfiable"
            return (max(0, size - suffix), size - 1)
        first = int(first_text)
        last = int(last_text) if last_text else size - 1
    except ValueError:
        return None
    if first >= size:
        return "unsatisfiable"
    if last < first:
        return None
    return (first, min(last, size - 1))


def if_range_matches(value, version):
    if value is None:
        return True
    value = value.strip()
    if value.startswith('"') or value.startswith("W/"):
        return not value.startswith("W/") and not version.etag.startswith("W/") and value == version.etag
    return value == version.last_modified


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "haul-fault-origin/1"

    def log_message(self, format, *args):
        pass

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self):
        self.handle_get(head=True)

    def do_GET(self):
        self.handle_get(head=False)

    def handle_get(self, head):
        url = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(url.query).items()}
        redirected = url.path.startswith("/_to/")
        path = url.path[len("/_to"):] if redirected else url.path
        if path.startswith("/_"):
            return self.control(path, query)
        with RESOURCES_LOCK:
            resource = RESOURCES.get(path)
        if resource is None:
            return self.send_json(404, {"error": "no such resource; create it with /_create?path=..."})
        if "redirect" in resource.params and not redirected:
            self.send_response(302)
            self.send_header("Location", "/_to" + path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.serve(resource, head)

    def control(self, path, query):
        target = query.pop("path", None)
        if path == "/_create":
            if not target:
                return self.send_json(400, {"error": "path is required"})
            resource = Resource(target, query)
            with RESOURCES_LOCK:
                RESOURCES[target] = resource
            return self.send_json(200, resource.stats())
        with RESOURCES_LOCK:
            resource = RESOURCES.get(target)
        if resource is None:
            return self.send_json(404, {"error": "no such resource %r" % target})
        if path == "/_stats":
            return self.send_json(200, resource.stats())
        if path == "/_heal":
            with resource.lock:
                resource.healed = True
            return self.send_json(200, resource.stats())
        return self.send_json(404, {"error": "unknown control %s" % path})

    def serve(self, resource, head):
        number, version = resource.next_number()
        entry = {
            "n": number,
            "range": self.headers.get("Range"),
            "if_range": self.headers.get("If-Range"),
            "start": None,
            "end": None,
            "status": None,
            "length": 0,
            "sent": 0,
            "version": version.number,
            "fault": None,
            "time": time.time(),
            "finished": None,
        }
        with resource.lock:
            resource.log.append(entry)
        try:
            self.respond(resource, number, version, entry, head)
        except (BrokenPipeError, ConnectionResetError, OSError):
            entry["fault"] = entry["fault"] or "client-closed"
            self.close_connection = True
        finally:
            entry["finished"] = time.time()

    def respond(self, resource, number, version, entry, head):
        if resource.active("status", number):
            code = resource.int("status")
            entry["status"] = code
            entry["fault"] = "status"
            body = ("fault origin says %d\n" % code).encode()
            self.send_response(code)
            if "retry_after" in resource.params:
                self.send_header("Retry-After", resource.params["retry_after"])
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            return

        size = version.size
        requested = parse_range(self.headers.get("Range"), size)
        if requested is not None and "ignore_if_range" not in resource.params and not if_range_matches(self.headers.get("If-Range"), version):
            requested = None
        if requested is not None and "norange_after" in resource.params and not resource.healed and number > resource.int("norange_after"):
            entry["fault"] = "norange"
            requested = None

        if requested == "unsatisfiable":
            entry["status"] = 416
            self.send_response(416)
            if "bare_416" not in resource.params:
                self.send_header("Content-Range", "bytes */%d" % size)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return

        if requested is None:
            first, last, status = 0, size - 1, 200
            content_range = None
        else:
            first, last = requested
            status = 206
            content_range = "bytes %d-%d/%d" % (first, last, size)
            if first != 0 and resource.active("shift", number):
                shift = resource.int("shift")
                first = min(max(0, first + shift), size - 1)
                last = min(max(first, last + shift), size - 1)
                content_range = "bytes %d-%d/%d" % (first, last, size)
                entry["fault"] = "shift"
            elif first != 0 and "shift_past_end" in resource.params:
                shift = resource.int("shift_past_end")
                if first + shift < size <= last + shift and resource.take("shift_past_end"):
                    content_range = "bytes %d-%d/%d" % (first + shift, last + shift, size)
                    first, last = first + shift, size - 1
                    entry["fault"] = "shift_past_end"
        entry["start"], entry["end"], entry["status"] = first, last, status
        length = last - first + 1 if size > 0 else 0
        entry["length"] = length

        self.send_response(status)
        content_type = resource.params.get("type", "application/octet-stream")
        if content_type != "none":
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        for name in ("link", "digest"):
            if name in resource.params:
                self.send_header(name.capitalize(), resource.params[name])
        validators = resource.params.get("validators", "etag,last-modified").split(",")
        if "etag" in validators:
            self.send_header("ETag", version.etag)
        if "last-modified" in validators:
            self.send_header("Last-Modified", version.last_modified)
        if content_range:
            self.send_header("Content-Range", content_range)
        self.end_headers()
        if head:
            return
        self.send_body(resource, number, memoryview(version.data)[first:first + length], entry)

    def send_body(self, resource, number, body, entry):
        total = len(body)
        rate = resource.int("rate", 0)
        cut = None  # (byte at which the fault strikes, kind)
        for kind in ("reset", "short", "stall"):
            if (kind + "_at") in resource.params and not resource.healed and self.fault_applies(resource, kind, number):
                cut = (min(resource.int(kind + "_at"), total), kind)
                break
        chunk = 65536 if not rate else max(4096, min(65536, rate // 20))
        started = time.monotonic()
        sent = 0
        while True:
            if cut and sent == cut[0]:
                kind = cut[1]
                cut = None
                entry["fault"] = kind
                if kind == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                if kind == "short":
                    self.close_connection = True
                    return
                if kind == "stall":
                    self.stall(float(resource.params.get("stall_secs", "60")))
                    started = time.monotonic() - (sent / rate if rate else 0)
            if sent >= total:
                return
            limit = (cut[0] - sent) if cut else (total - sent)
            n = min(chunk, limit)
            self.wfile.write(body[sent:sent + n])
            sent += n
            entry["sent"] = sent
            if rate:
                delay = started + sent / rate - time.monotonic()
                if delay > 0:
                    self.pause(delay)

    @staticmethod
    def fault_applies(resource, kind, number):
        after = resource.int(kind + "_after", 0)
        times = resource.int(kind + "_times", 1)
        return after < number <= after + times

    def pause(self, seconds):
        """Waits between paced chunks, but notices at once when the client hangs up (as an
        event-driven server such as nginx does), so that its log shows when the body stopped."""
        readable, _, _ = select.select([self.connection], [], [], seconds)
        if readable:
            try:
                if self.connection.recv(1, socket.MSG_PEEK) == b"":
                    raise ConnectionResetError("client closed mid-body")
            except BlockingIOError:
                pass
            time.sleep(max(0.0, seconds))  # data from the client: no pipelining here, just wait

    def stall(self, seconds):
        """Sends nothing for `seconds`, returning early if the client hangs up."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.2)
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        raise ConnectionResetError("client closed during stall")
                except BlockingIOError:
                    pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass


def watch_parent(parent):
    """Exits when the test process that started us is gone, so no origin outlives its test."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.2)


if __name__ == "__main__":
    main()
