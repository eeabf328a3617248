"""A hostile tus server for Haul's upload tests (standard library only).

    python3 hostile_tus.py LOCATION

Answers every creation POST with `201 Created` and `Location: LOCATION` (say
`file:///tmp/x/pwned` or `gopher://127.0.0.1:1/x`), HEAD with `Upload-Offset: 0`, and PATCH
with the offset after the body; counts requests by method at `GET /stats`. Prints
`PORT <n>` once listening on 127.0.0.1 (port chosen by the kernel).
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCATION = sys.argv[1]
STATS = {"POST": 0, "HEAD": 0, "PATCH": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, headers):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Tus-Resumable", "1.0.0")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        STATS["POST"] += 1
        self.answer(201, [("Location", LOCATION)])

    def do_HEAD(self):
        STATS["HEAD"] += 1
        self.answer(200, [("Upload-Offset", "0"), ("Cache-Control", "no-store")])

    def do_PATCH(self):
        STATS["PATCH"] += 1
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        self.answer(204, [("Upload-Offset", str(int(self.headers.get("Upload-Offset", "0")) + length))])

    def do_GET(self):
        body = json.dumps(STATS).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
