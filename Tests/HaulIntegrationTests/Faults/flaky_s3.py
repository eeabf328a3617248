#!/usr/bin/env python3
"""A flaky S3 endpoint for Haul's retry and region tests (standard library only; signatures are
not checked). Prints `PORT <n>` once listening on 127.0.0.1.

    HEAD /BUCKET               200; bucket `elsewhere`: 301 with x-amz-bucket-region: eu-west-1
    PUT  /BUCKET/KEY           the first PUT of each key: 503 SlowDown (body read and dropped); then stored
    PUT  /hostile/KEY          400 InvalidArgument with a message that writes the clipboard (ESC]52),
                               clears the screen (ESC[2J), uses the 8-bit CSI (U+009B) and U+202E
    HEAD, GET /BUCKET/KEY      the stored object (404 if none)
    GET  /BUCKET?uploads=      an empty ListMultipartUploadsResult
    GET  /_log                 JSON: every request so far as "METHOD /path?query"

With `--hold-puts`: no SlowDown; each PUT reads its whole body, logs "HELD PUT /path" and
answers only once `GET /_release` was asked (a slow store's answer, held as long as a test likes).
"""
import hashlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

OBJECTS = {}
PUTS = {}
LOG = []
LOCK = threading.Lock()
HOLD_PUTS = "--hold-puts" in sys.argv[1:]
RELEASED = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, headers=(), body=b"", head=False):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def parts(self):
        url = urlsplit(self.path)
        with LOCK:
            if url.path != "/_log":
                LOG.append(self.command + " " + self.path)
        bucket, _, key = url.path.lstrip("/").partition("/")
        return url, bucket, key

    def object_answer(self, head):
        _, bucket, key = self.parts()
        if not key:
            if bucket == "elsewhere":
                return self.answer(301, [("x-amz-bucket-region", "eu-west-1")], head=True)
            return self.answer(200, head=head)
        with LOCK:
            body = OBJECTS.get((bucket, key))
        if body is None:
            return self.answer(404, head=True)
        etag = '"%s"' % hashlib.md5(body).hexdigest()
        return self.answer(200, [("ETag", etag), ("Content-Type", "application/octet-stream")], body, head=head)

    def do_HEAD(self):
        self.object_answer(head=True)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/_release":
            RELEASED.set()
            return self.answer(200)
        if url.path == "/_log":
            with LOCK:
                body = json.dumps(LOG).encode()
            return self.answer(200, [("Content-Type", "application/json")], body)
        if "uploads" in url.query:
            self.parts()
            return self.answer(200, [("Content-Type", "application/xml")], b"<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>")
        self.object_answer(head=False)

    def do_PUT(self):
        _, bucket, key = self.parts()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with LOCK:
            PUTS[(bucket, key)] = PUTS.get((bucket, key), 0) + 1
            first = PUTS[(bucket, key)] == 1 and not HOLD_PUTS
            if not first and key:
                OBJECTS[(bucket, key)] = body
        if bucket == "hostile":
            message = "Not \x1b]52;c;aGFja2Vk\x07 \x1b[2J \u009b31m \u202egnp.exe"
            error = "<Error><Code>InvalidArgument</Code><Message>%s</Message></Error>" % message
            return self.answer(400, [("Content-Type", "application/xml")], error.encode())
        if HOLD_PUTS and key:
            with LOCK:
                LOG.append("HELD " + self.command + " " + self.path)
            RELEASED.wait()
        if first and key:
            error = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
            return self.answer(503, [("Content-Type", "application/xml")], error)
        self.answer(200, [("ETag", '"%s"' % hashlib.md5(body).hexdigest())])

    def do_DELETE(self):
        self.parts()
        self.answer(204, head=True)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("PORT", server.server_address[1], flush=True)
server.serve_forever()
