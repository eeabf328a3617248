"""moto's S3 server, an AWS-faithful second store for the S3 tests, on a free loopback port
below 32768 (Linux's ephemeral range starts there). Prints `PORT <n>` once it answers.
Needs `moto[server]` (scripts/test-requirements.txt); run with the test venv's python.
"""
import random
import socket
import time
import urllib.request

from moto.server import ThreadedMotoServer

for _ in range(500):
    port = random.randint(20000, 32000)
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            continue
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    try:
        server.start()
    except OSError:
        continue
    break
else:
    raise SystemExit("no free port for moto")
for _ in range(100):
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/moto-api/" % port, timeout=1)
        break
    except Exception:
        time.sleep(0.1)
print("PORT", port, flush=True)
while True:
    time.sleep(3600)
