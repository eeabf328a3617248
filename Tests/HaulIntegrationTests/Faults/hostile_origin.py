#!/usr/bin/env python3
"""A hostile HTTP origin for Haul's security tests (standard library only).

    python3 hostile_origin.py [BIND_ADDRESS]     (default 127.0.0.1; prints `PORT <n>` once listening)

    GET /huge                 206 to any range, announcing a total of 2^63-1 bytes (zeros)
    GET /file/NAME?size=N     N deterministic bytes, honouring one Range
    GET /endless              200 without a length: 64 MiB of zeros, then the connection closes
    GET /bighead              200 with 1 MiB of response headers
    GET /redirect?to=URL      302 Location: URL (&code=301|303|307|308)
    GET /auth/NAME?size=N     as /file/, but 401 without one of AUTHORIZATIONS
    GET /trickle/NAME?size=N&every=S  as /file/, but its body one byte every S seconds (default 0.3)
    POST /upload              reads the body and answers 200 {} (logged like a GET)
    GET|POST /hostile?code=N  N (default 404) with a reason phrase and a JSON body that write the
                              clipboard (ESC]52), clear the screen (ESC[2J), use the 8-bit CSI
                              (U+009B) and turn text right to left (U+202E)
    GET /_log                 JSON: every request so far as {"path", "headers"} (this endpoint excluded)
"""
import base64
import json
import random
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HUGE = 2**63 - 1
# What /auth/ accepts: the bearer token and the netrc login (netrc-user:netrc-pass) of the tests.
AUTHORIZATIONS = {"Bearer s3cr3t-bearer-token", "Basic " + base64.b64encode(b"netrc-user:netrc-pass").decode()}
LOG = []
LOCK = threading.Lock()


def content(name, size):
    return random.Random(name).randbytes(size)


# What a hostile peer says: a clipboard write, a screen clear, a C1 CSI, a bidi override.
HOSTILE = "Not \x1b]52;c;aGFja2Vk\x07 \x1b[2J \u009b31m \u202egnp.exe Found"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def requested_range(self, total):
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if not match:
            return None
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else total - 1
        return first, min(last, total - 1)

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/_log":
            with LOCK:
                body = json.dumps(LOG).encode()
            return self.answer(200, [("Content-Type", "application/json")], body)
        with LOCK:
            LOG.append({"path": self.path, "headers": {k: v for k, v in self.headers.items()}})
        if url.path == "/hostile":
            return self.hostile(query)
        if url.path == "/redirect":
            code = int(query.get("code", ["302"])[0])
            return self.answer(code, [("Location", query["to"][0])], b"")
        if url.path == "/endless":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for _ in range(1024):
                    self.wfile.write(b"\0" * 65536)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if url.path == "/bighead":
            self.send_response(200)
            try:
                for n in range(16384):
                    self.send_header("X-Filler-%d" % n, "x" * 48)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if url.path == "/huge":
            first, last = self.requested_range(HUGE) or (0, 65535)
            last = min(last, first + (16 << 20) - 1)
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, HUGE))
            self.send_header("Content-Length", str(last - first + 1))
            self.send_header("ETag", '"huge"')
            self.end_headers()
            remaining = last - first + 1
            try:
                while remaining > 0:
                    chunk = min(remaining, 1 << 16)
                    self.wfile.write(b"\0" * chunk)
                    remaining -= chunk
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if url.path.startswith("/auth/") and self.headers.get("Authorization") not in AUTHORIZATIONS:
            return self.answer(401, [("WWW-Authenticate", 'Basic realm="haul"')], b"who are you?\n")
        if url.path.startswith("/trickle/"):
            size = int(query.get("size", ["1000"])[0])
            every = float(query.get("every", ["0.3"])[0])
            data = content(url.path, size)
            first, last = self.requested_range(size) or (0, size - 1)
            self.send_response(206 if self.headers.get("Range") else 200)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
            self.send_header("Content-Length", str(last - first + 1))
            self.send_header("ETag", '"t"')
            self.end_headers()
            try:
                for offset in range(first, last + 1):
                    self.wfile.write(data[offset : offset + 1])
                    self.wfile.flush()
                    time.sleep(every)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if url.path.startswith("/file/") or url.path.startswith("/auth/"):
            size = int(query.get("size", ["1000"])[0])
            data = content(url.path, size)
            found = self.requested_range(size)
            if found:
                first, last = found
                return self.answer(206, [("Content-Range", "bytes %d-%d/%d" % (first, last, size)), ("ETag", '"f"')], data[first : last + 1])
            return self.answer(200, [("ETag", '"f"')], data)
        self.answer(404, [], b"not here\n")

    def do_POST(self):
        with LOCK:
            LOG.append({"path": self.path, "headers": {k: v for k, v in self.headers.items()}})
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                self.rfile.read(size + 2)
                if size == 0:
                    break
        else:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
        url = urlsplit(self.path)
        if url.path == "/hostile":
            return self.hostile(parse_qs(url.query))
        self.answer(200, [("Content-Type", "application/json")], b"{}")

    def hostile(self, query):
        """The status line is written by hand: http.server encodes a reason phrase as Latin-1."""
        code = int(query.get("code", ["404"])[0])
        body = json.dumps({"detail": "refused: " + HOSTILE}).encode()
        head = "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (code, HOSTILE, len(body))
        self.wfile.write(head.encode() + body)

    def answer(self, status, headers, body):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    server = ThreadingHTTPServer((sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
