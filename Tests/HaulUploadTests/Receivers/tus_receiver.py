"""A tus 1.0.0 server for Haul's upload tests: tuspyserver's FastAPI router under uvicorn.

    python3 tus_receiver.py FILES_DIR [BYTES_PER_SECOND]

Uploads land in FILES_DIR/<id>. An ASGI wrapper counts the body bytes of every PATCH that
reached the server, and with BYTES_PER_SECOND slows PATCH bodies to about that rate so a test
can interrupt an upload midway; `GET /stats` answers {"patch_bytes": n, "patches": n,
"active": n}, where "active" counts PATCH requests still being handled. tuspyserver waits for
its per-upload file lock by blocking the event loop, so a resume must wait until the handler
of an interrupted PATCH has finished (active == 0). Prints
`PORT <n>` once listening on 127.0.0.1 (port chosen by the kernel).
"""
import asyncio
import socket
import sys

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router

stats = {"patch_bytes": 0, "patches": 0, "active": 0}


def counting(app, rate):
    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "PATCH":
            return await app(scope, receive, send)
        stats["patches"] += 1
        stats["active"] += 1

        async def counted_receive():
            message = await receive()
            size = len(message.get("body", b""))
            stats["patch_bytes"] += size
            if rate:
                await asyncio.sleep(size / rate)
            return message

        try:
            return await app(scope, counted_receive, send)
        finally:
            stats["active"] -= 1

    return wrapped


def main():
    api = FastAPI()
    api.include_router(create_tus_router(prefix="files", files_dir=sys.argv[1]))
    api.add_api_route("/stats", lambda: stats, methods=["GET"])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(counting(api, int(sys.argv[2]) if len(sys.argv) > 2 else 0), log_level="warning", timeout_keep_alive=5)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
