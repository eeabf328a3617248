"""moto's S3 server, an AWS-faithful second store for the S3 tests, on a free loopback port
below 32768 (Linux's ephemeral range starts there). Prints `PORT <n>` once it answers.
Needs `moto[server]` (scripts/test-requirements.txt); run with the test venv's python.

With `--not-implemented`: the port printed is a proxy in front of moto that answers a PUT or
POST carrying `If-None-Match`, `If-Match` or `x-amz-checksum-sha256` with `501 NotImplemented`
(after reading its body), as stores without conditional writes or checksums do, and passes
everything else on. `GET /_refused` on it: how many requests it refused.

With `--record`: the port printed is a proxy that passes every request on and records its
method and path (with the query); `GET /_requests` on it: those lines, as a JSON list.
"""
import json
import http.client
import random
import socket
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from moto.server import ThreadedMotoServer

OPTIONAL = ("if-none-match", "if-match", "x-amz-checksum-sha256")
HOP = ("connection", "expect", "transfer-encoding", "keep-alive")
REFUSED = [0]
RECORDED = []
LOCK = threading.Lock()


def free_port():
    while True:
        port = random.randint(20000, 32000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port


def start_moto():
    for _ in range(500):
        port = free_port()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        try:
            server.start()
        except OSError:
            continue
        for _ in range(100):
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/moto-api/" % port, timeout=1)
                return port
            except Exception:
                time.sleep(0.1)
    raise SystemExit("moto did not start")


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream = 0
    record = False

    def log_message(self, *args):
        pass

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/_refused":
            return self.answer(200, [("Content-Type", "application/json")], str(REFUSED[0]).encode())
        if self.path == "/_requests":
            with LOCK:
                lines = list(RECORDED)
            return self.answer(200, [("Content-Type", "application/json")], json.dumps(lines).encode())
        if self.record:
            with LOCK:
                RECORDED.append("%s %s" % (self.command, self.path))
        elif self.command in ("PUT", "POST") and any(name in self.headers for name in OPTIONAL):
            with LOCK:
                REFUSED[0] += 1
            error = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code>'
                     b"<Message>A header you provided implies functionality that is not implemented</Message></Error>")
            return self.answer(501, [("Content-Type", "application/xml")], error)
        connection = http.client.HTTPConnection("127.0.0.1", self.upstream, timeout=60)
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP}
        headers["Content-Length"] = str(len(body))
        connection.request(self.command, self.path, body=body, headers=headers)
        reply = connection.getresponse()
        data = reply.read()
        passed = [(n, v) for n, v in reply.getheaders() if n.lower() not in HOP + ("content-length",)]
        self.answer(reply.status, passed, data, head=self.command == "HEAD", length=reply.getheader("Content-Length"))
        connection.close()

    def answer(self, status, headers, body, head=False, length=None):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", length if head and length is not None else str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = relay


moto = start_moto()
if "--not-implemented" in sys.argv[1:] or "--record" in sys.argv[1:]:
    Proxy.upstream = moto
    Proxy.record = "--record" in sys.argv[1:]
    for _ in range(500):
        try:
            proxy = ThreadingHTTPServer(("127.0.0.1", free_port()), Proxy)
            break
        except OSError:
            continue
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    print("PORT", proxy.server_address[1], flush=True)
else:
    print("PORT", moto, flush=True)
while True:
    time.sleep(3600)
