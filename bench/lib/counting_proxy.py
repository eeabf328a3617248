"""A TCP proxy that counts the connections it accepts: counting_proxy.py TARGET_PORT LISTEN_PORT COUNT_FILE.

Every accepted connection is relayed to 127.0.0.1:TARGET_PORT and the running count is
written to COUNT_FILE, so a benchmark reads how many connections a client opened from outside it.
"""
import socket
import sys
import threading

target, listen_port, count_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
count = 0


def pump(source, sink):
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    for end in (source, sink):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", listen_port))
server.listen(128)
while True:
    client, _ = server.accept()
    upstream = socket.create_connection(("127.0.0.1", target))
    count += 1
    with open(count_file, "w") as out:
        out.write(str(count))
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
