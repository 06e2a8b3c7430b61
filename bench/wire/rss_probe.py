#!/usr/bin/env python3
"""The resident memory of a rockdoc-serve around large messages (issues
#33.18, #34.11): its VmRSS at start, after N connections each send one
message of about M bytes at once (updates of M / 16 MB statements, each
carrying a document of nearly 16 MB, matching nothing, so the database
keeps none of it) and are answered, and after they all close.

    python3 bench/wire/rss_probe.py build/tools/rockdoc-serve [connections] [message MB] \
        [rounds] [-- server args...]

Prints one line per measure, in MB. Uses raw sockets and pymongo's bson.
"""
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading

import bson


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024.0


def op_msg(body, identifier, docs, request_id=1):
    seq = identifier.encode() + b"\0" + b"".join(docs)
    payload = (struct.pack("<I", 0) + b"\0" + bson.BSON.encode(body) +
               b"\1" + struct.pack("<i", 4 + len(seq)) + seq)
    return struct.pack("<iiii", 16 + len(payload), request_id, 0, 2013) + payload


def recv_message(s):
    head = b""
    while len(head) < 16:
        chunk = s.recv(16 - len(head))
        if not chunk:
            raise RuntimeError("closed")
        head += chunk
    length = struct.unpack("<i", head[:4])[0]
    rest = b""
    while len(rest) < length - 16:
        chunk = s.recv(min(1 << 20, length - 16 - len(rest)))
        if not chunk:
            raise RuntimeError("closed")
        rest += chunk
    return bson.BSON(rest[5:]).decode()


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    server_path = args[0]
    connections = int(args[1]) if len(args) > 1 else 8
    message_mb = float(args[2]) if len(args) > 2 else 47.9
    rounds = int(args[3]) if len(args) > 3 else 1
    scratch = tempfile.mkdtemp(prefix="rockdoc-rss-")
    server = subprocess.Popen([server_path, "--db", os.path.join(scratch, "db"), "--port", "0"] +
                              extra, stdout=subprocess.PIPE, text=True)
    port = None
    while port is None:
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", server.stdout.readline())
        if m:
            port = int(m.group(1))
    print("start: %.0f MB" % rss_mb(server.pid))
    # Statements of just under 16 MiB: as many as fill the message.
    count = -(-int(message_mb * 1e6) // (16 * 1024 * 1024 - 1024))
    statement_size = int(message_mb * 1e6 / count) - 200
    pad = "p" * (statement_size - 100)
    docs = [bson.BSON.encode({"q": {"_id": -1}, "u": {"$set": {"pad": pad}}}) for _ in range(count)]
    message = op_msg({"update": "c", "$db": "probe"}, "updates", docs)
    print("message: %.1f MB, %d statements" % (len(message) / 1e6, count))
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(connections)]
    peak = [0.0]
    for r in range(rounds):
        replies = []

        def one(s):
            s.sendall(message)
            replies.append(recv_message(s))

        threads = [threading.Thread(target=one, args=(s,)) for s in socks]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            peak[0] = max(peak[0], rss_mb(server.pid))
            for t in threads:
                t.join(0.05)
        assert all(rep["ok"] == 1 and rep["n"] == 0 for rep in replies), replies[:1]
        print("after round %d (connections open): %.0f MB (peak seen %.0f MB)"
              % (r + 1, rss_mb(server.pid), peak[0]))
    for s in socks:
        s.close()
    # The connections' threads end as the server sees them close.
    subprocess.run(["sleep", "1"])
    print("after the connections closed: %.0f MB" % rss_mb(server.pid))
    server.terminate()
    server.wait()


if __name__ == "__main__":
    main()
