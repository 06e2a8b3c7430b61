#!/usr/bin/env python3
"""Change-event delivery over the wire (issue 37): the time from just
before a pymongo insert_one to a second pymongo client's change stream
returning its event, p50 / p99 / max over N inserts, each made once the
previous one was delivered and the watcher had 1 ms to wait again (a
quiet machine's latency, not a throughput).
Beside it, in the same run, insert_one alone: what of the latency is the
write's own round trip. The watcher blocks in next() on an awaitData
getMore (maxAwaitTimeMS 1000), as an application does.

    python3 bench/wire/change_stream_latency.py build/tools/rockdoc-serve [N]

Starts its own rockdoc-serve on a free port (--port 0) and a scratch
directory. A measurement: nothing is asserted.
"""
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pymongo


def report(what, us):
    us = sorted(us)
    pick = lambda p: us[min(len(us) - 1, int(p * len(us)))]
    print("%-36s p50 %8.1f us  p99 %8.1f us  max %8.1f us  (%d)"
          % (what, pick(0.5), pick(0.99), us[-1], len(us)))


def main():
    server_path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    scratch = tempfile.mkdtemp(prefix="rockdoc-cs-latency-")
    server = subprocess.Popen([server_path, "--db", scratch + "/db", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        uri = None
        for line in server.stdout:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                uri = "mongodb://127.0.0.1:%s/?directConnection=true" % m.group(1)
                break
        if uri is None:
            raise SystemExit("rockdoc-serve did not start")
        threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
        writer = pymongo.MongoClient(uri).bench.c
        watcher = pymongo.MongoClient(uri).bench.c
        writer.insert_one({"_id": -1})  # the collection exists
        alone = []
        for i in range(n):
            t0 = time.perf_counter()
            writer.insert_one({"_id": i, "text": "x" * 250})
            alone.append((time.perf_counter() - t0) * 1e6)
        stream = watcher.watch(max_await_time_ms=1000)
        stream.try_next()  # opened: the server's stream stands at the next write
        # The watcher waits in its own thread, blocked in next() (a getMore
        # the server holds until the event commits).
        got = [None] * n
        arrived = threading.Semaphore(0)

        def watch():
            for i in range(n):
                event = stream.next()
                got[i] = time.perf_counter()
                assert event["documentKey"]["_id"] == n + i, event
                arrived.release()

        thread = threading.Thread(target=watch)
        thread.start()
        delivered = []
        for i in range(n):
            time.sleep(0.001)  # the watcher is back in its getMore
            t0 = time.perf_counter()
            writer.insert_one({"_id": n + i, "text": "x" * 250})
            arrived.acquire()
            delivered.append((got[i] - t0) * 1e6)
        thread.join()
        report("insert_one alone (pymongo, loopback)", alone)
        report("insert_one to the watcher's next()", delivered)
        stream.close()
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
