"""A multipart/form-data receiver for Haul's upload tests and benchmark.

Parses every POST with the independent `multipart` package (PushMultipartParser,
strict mode), streaming: file parts are hashed, never stored. Answers 200 with a
JSON summary of the parts; `GET /stats` tells how many POSTs arrived.

    python3 multipart_receiver.py [--fail-first N] [--fail-status 500] [--status 403]

Prints `PORT <n>` once listening on 127.0.0.1 (port chosen by the kernel).
"""
import argparse
import hashlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import multipart

CHUNK = 1 << 20


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with self.server.lock:
            self.reply(200, {"requests": self.server.requests})

    def do_POST(self):
        with self.server.lock:
            self.server.requests += 1
            number = self.server.requests
        options = self.server.options
        length = int(self.headers["Content-Length"])
        if options.status or number <= options.fail_first:
            self.drain(length)
            status = options.status or options.fail_status
            return self.reply(status, {"detail": f"receiver told to answer {status} (request {number})"}, [("Retry-After", "0")])
        try:
            parts = self.parse(length)
        except multipart.MultipartError as error:
            return self.reply(400, {"detail": f"strict parser rejected the body: {error}"})
        self.reply(200, {"parts": parts, "expect": self.headers.get("Expect"), "content_type": self.headers["Content-Type"]})

    def drain(self, length):
        while length > 0:
            length -= len(self.rfile.read(min(CHUNK, length)))

    def parse(self, length):
        kind, params = multipart.parse_options_header(self.headers["Content-Type"])
        if kind != "multipart/form-data":
            raise multipart.MultipartError(f"Content-Type is {kind}")
        parts, current, digest, value = [], None, None, b""
        with multipart.PushMultipartParser(params["boundary"], length, strict=True) as parser:
            remaining = length
            while not parser.closed:
                chunk = self.rfile.read(min(CHUNK, remaining))
                remaining -= len(chunk)
                for event in parser.parse(chunk):
                    if isinstance(event, multipart.MultipartSegment):
                        current, digest, value = event, hashlib.sha256(), b""
                    elif event:
                        digest.update(event)
                        if current.filename is None:
                            value += event
                    else:
                        parts.append({
                            "name": current.name,
                            "filename": current.filename,
                            "content_type": current.content_type,
                            "headers": [[name, val] for name, val in current.headerlist],
                            "size": current.size,
                            "sha256": digest.hexdigest(),
                            "value": value.decode("utf-8") if current.filename is None else None,
                        })
        return parts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fail-first", type=int, default=0, help="answer the first N POSTs with --fail-status")
    parser.add_argument("--fail-status", type=int, default=500)
    parser.add_argument("--status", type=int, default=0, help="answer every POST with this status")
    options = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.options, server.requests, server.lock = options, 0, threading.Lock()
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
