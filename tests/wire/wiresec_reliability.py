#!/usr/bin/env python3
"""rockdoc-serve under attack and failure (issue #34): a bounded reliability suite.

    wiresec_reliability.py --server BUILD/tools/rockdoc-serve [--only NAME]

Each scenario starts its own server (loopback, ephemeral port, a scratch
directory), drives it with pymongo and raw sockets, and asserts that the
server is still serving and that nothing acknowledged is lost:

  sigkill      SIGKILL rounds while several pymongo threads insert (w: 1):
               after each restart every acknowledged document is there.
  disk_full    the database on a small tmpfs: inserts fail with
               OutOfDiskSpace (14031) once it is full, reads and the
               server go on, and after the tmpfs grows (remount) and the
               server restarts every acknowledged document is there.
               Needs root and mount(2); skipped with a message otherwise.
  descriptors  RLIMIT_NOFILE 256 for the server, 300 idle connections: the
               excess is refused at once (closed, not left hanging), a
               client still connects, writes keep working, and SIGTERM
               shuts the server down cleanly; under 64 it refuses to start.
  session_flood  --auth; an unauthenticated client sends 5,000 pings, each
               with a new lsid, while a logged-in client reads and writes:
               the logged-in client is served throughout and the server
               holds no session for the unauthenticated one.
  change_streams  a change stream resumes from its token after its client
               process is SIGKILLed (its cursor left open) and after the
               server is SIGKILLed and restarted on the same directory,
               with updateLookup: each acknowledged write one event, in
               order (issue 37). With pymongo, the Node.js driver and
               mongosh watching and resuming.

No timing is asserted: every wait is for an event (a line, a count, a
closed socket), bounded only so that a broken server fails the test
instead of hanging it. Exits 77 when pymongo is not installed.
"""
import argparse
import json
import os
import random
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid

from pymongo_harness import pymongo, start_server  # exits 77 without pymongo
import bson
from pymongo.errors import OperationFailure, PyMongoError

SERVER = None


class Skip(Exception):
    pass


class Server:
    """One rockdoc-serve process over `db`."""

    def __init__(self, db, args=(), nofile=None, log_path=None):
        def limits():
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        # Its log to a file beside the database: a full pipe would block it.
        self.log_path = log_path or db.rstrip("/") + ".log"
        self.proc, self.port = start_server([SERVER, "--db", db, "--port", "0"] + list(args),
                                            self.log_path, preexec_fn=limits)
        self.uri = "mongodb://127.0.0.1:%d/" % self.port

    def client(self, **kw):
        return pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=10000, **kw)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        """SIGTERM; asserts a clean shutdown."""
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0 and "shut down cleanly" in out, \
            (self.proc.returncode, out, self.tail())

    def tail(self):
        with open(self.log_path) as f:
            return "".join(f.readlines()[-20:])


def op_msg(doc, request_id=1):
    body = struct.pack("<I", 0) + b"\x00" + bson.encode(doc)
    return struct.pack("<iiii", 16 + len(body), request_id, 0, 2013) + body


def read_reply(sock):
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the server")
            data += chunk
        return data
    header = exactly(16)
    length = struct.unpack("<i", header[:4])[0]
    rest = exactly(length - 16)
    return bson.decode(rest[5:])


def raw_command(sock, doc):
    sock.sendall(op_msg(doc))
    return read_reply(sock)


def verify(coll, acknowledged, what):
    present = set(d["_id"] for d in coll.find({}, {"_id": 1}))
    lost = [i for i in acknowledged if i not in present]
    assert not lost, "%s: %d acknowledged documents lost, e.g. %r" % (what, len(lost), lost[:5])


# ---- scenarios ----

def sigkill(scratch):
    db = os.path.join(scratch, "db")
    acknowledged = []
    lock = threading.Lock()
    for round_number in range(3):
        server = Server(db)
        stop = threading.Event()

        def writer(t):
            c = server.client(retryWrites=False)
            i = 0
            while not stop.is_set():
                _id = "r%d-t%d-%d" % (round_number, t, i)
                i += 1
                try:
                    c.test.items.insert_one({"_id": _id, "pad": "x" * random.randint(10, 2000)})
                except PyMongoError:
                    return  # the server is gone: this one was not acknowledged
                with lock:
                    acknowledged.append(_id)
        threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        # The event: a few hundred more acknowledged writes in this round.
        target = len(acknowledged) + 400
        for _ in range(6000):
            with lock:
                if len(acknowledged) >= target:
                    break
            time.sleep(0.005)
        server.kill()  # in the middle of the writes
        stop.set()
        for t in threads:
            t.join()
        server = Server(db)
        verify(server.client().test.items, list(acknowledged), "round %d" % round_number)
        server.stop()
    print("  %d acknowledged writes across 3 SIGKILL rounds, none lost" % len(acknowledged))


def next_events(stream, n, what):
    """The next n events of a pymongo change stream (try_next until they
    came; bounded so that a missing event fails instead of hanging)."""
    events = []
    for _ in range(2000):
        if len(events) == n:
            return events
        e = stream.try_next()
        if e is not None:
            events.append(e)
    raise AssertionError("%s: %d of %d events came: %r" % (what, len(events), n, events))


def shape(e):
    """An event as the checks compare it: operationType, _id, and the
    fullDocument's x when there is one."""
    doc = e.get("fullDocument")
    return (e["operationType"], e["documentKey"]["_id"], doc.get("x") if doc else None)


def watching_child(uri):
    """--change-stream-child: watches test.cs, says "watching", then prints
    the resume token of its first event (Extended JSON) and waits to be
    killed with the cursor still open."""
    from bson import json_util
    c = pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000)
    stream = c.test.cs.watch(max_await_time_ms=100)
    print("watching", flush=True)
    first = next_events(stream, 1, "child")[0]
    assert shape(first) == ("insert", 2, None), first
    print(json_util.dumps(stream.resume_token), flush=True)
    while True:
        stream.try_next()


# The Node.js driver's steps of change_streams (its own process each).
NODE_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_change_stream_child.js")


def node_driver_installed():
    return shutil.which("node") is not None and os.path.isdir(
        os.path.join(os.path.dirname(NODE_CHILD), "node_modules", "mongodb"))


# mongosh's steps (its own process each), where scripts/install-deps.sh
# installed it.
MONGOSH_CHILD = os.path.join(os.path.dirname(NODE_CHILD), "mongosh_change_stream_child.js")
MONGOSH = os.path.join(os.path.dirname(NODE_CHILD), "node_modules", ".bin", "mongosh")


def mongosh_installed():
    return shutil.which("node") is not None and os.path.exists(MONGOSH)


def mongosh_step(uri, home, **env):
    """The mongosh command and environment of one step of MONGOSH_CHILD."""
    environ = dict(os.environ, HOME=home, **env)
    return [MONGOSH, uri, "--quiet", "--file", MONGOSH_CHILD], environ


def change_streams(scratch):
    """A change stream resumes after its client is killed (SIGKILL, the
    server's cursor left open) and after the server is killed and restarted
    on the same directory, with updateLookup; every acknowledged write is
    an event, once, in order. Once with pymongo on both sides, once with
    the Node.js driver watching and resuming (where it is installed)."""
    kinds = (["pymongo"] + (["node"] if node_driver_installed() else []) +
             (["mongosh"] if mongosh_installed() else []))
    for kind in kinds:
        change_streams_with(os.path.join(scratch, kind), kind)
    if "node" not in kinds or "mongosh" not in kinds:
        print("  the Node.js driver or mongosh is not installed (scripts/install-deps.sh): %s only"
              % ", ".join(kinds))


def change_streams_with(db, kind):
    from bson import json_util
    server = Server(db)
    c = server.client(directConnection=True)
    c.test.cs.insert_one({"_id": 1})
    home = os.path.join(db + "-home")  # mongosh keeps its logs in its home
    os.makedirs(home, exist_ok=True)
    environ = None
    if kind == "pymongo":
        watcher = [sys.executable, os.path.abspath(__file__), "--change-stream-child", server.uri]
    elif kind == "node":
        watcher = ["node", NODE_CHILD, "watch", server.uri]
    else:
        watcher, environ = mongosh_step(server.uri + "?directConnection=true", home,
                                        CS_MODE="watch")
    child = subprocess.Popen(watcher, stdout=subprocess.PIPE, text=True,
                             cwd=os.path.dirname(NODE_CHILD), env=environ)
    try:
        assert child.stdout.readline().strip() == "watching", kind
        c.test.cs.insert_many([{"_id": 2}, {"_id": 3}])
        token = json_util.loads(child.stdout.readline())
    finally:
        child.kill()  # the client dies with its stream open
        child.wait()
    # Resumed by another client: the event after the child's last.
    stream = c.test.cs.watch(resume_after=token, max_await_time_ms=100)
    assert [shape(e) for e in next_events(stream, 1, "after the client's kill")] == \
        [("insert", 3, None)], kind
    c.test.cs.update_one({"_id": 3}, {"$set": {"x": 1}})
    c.test.cs.insert_one({"_id": 4})
    server.kill()  # SIGKILL with the stream open
    server = Server(db)
    want = [("insert", 3, None), ("update", 3, 1), ("insert", 4, None)]
    if kind == "pymongo":
        c = server.client(replicaSet="rs0")  # discovered as the set's primary this time
        stream = c.test.cs.watch(resume_after=token, full_document="updateLookup",
                                 max_await_time_ms=100)
        got = [shape(e) for e in next_events(stream, 3, "after the server's restart")]
        assert stream.try_next() is None  # nothing else: once each
    else:
        if kind == "node":
            step, environ = (["node", NODE_CHILD, "resume", server.uri + "?replicaSet=rs0",
                              json_util.dumps(token), "3"], None)
        else:
            step, environ = mongosh_step(server.uri + "?replicaSet=rs0", home, CS_MODE="resume",
                                         CS_TOKEN=json_util.dumps(token), CS_COUNT="3")
        out = subprocess.run(step, capture_output=True, text=True, env=environ,
                             cwd=os.path.dirname(NODE_CHILD), timeout=120)
        lines = out.stdout.split("\n")
        assert out.returncode == 0 and lines[3] == "none after", (out.stdout, out.stderr)
        got = [tuple(json.loads(line)) for line in lines[:3]]
    assert got == want, (kind, got)
    server.stop()
    print("  %s: resumed after a killed client and after a SIGKILLed server: %r" % (kind, got))


def disk_full(scratch):
    if os.geteuid() != 0:
        raise Skip("needs root to mount a small tmpfs (the CI runs as root)")
    mnt = os.path.join(scratch, "tmpfs")
    os.mkdir(mnt)
    try:
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mnt],
                           capture_output=True, text=True)
    except OSError as e:  # no mount(8) here
        raise Skip("cannot run mount (%s)" % e)
    if r.returncode != 0:
        raise Skip("cannot mount a tmpfs here (%s)" % (r.stderr.strip() or r.returncode))
    server = None
    try:
        db = os.path.join(mnt, "db")
        log = os.path.join(scratch, "serve.log")  # not on the disk that fills
        server = Server(db, log_path=log)
        c = server.client(retryWrites=False)
        coll = c.test.items
        acknowledged = []
        full = None
        for i in range(2000):  # 2000 x 64 KB: more than 48 MB
            try:
                coll.insert_one({"_id": i, "pad": os.urandom(32 * 1024).hex()})
                acknowledged.append(i)
            except OperationFailure as e:
                full = e
                break
        assert full is not None, "48 MB held 2000 documents of 64 KB"
        assert full.code == 14031, (full.code, full.details)
        # Still serving: reads, and every acknowledged document.
        assert c.admin.command("ping")["ok"] == 1
        verify(coll, acknowledged, "on the full disk")
        # Room again, then a restart (the shutdown may fail to flush on the
        # full disk: not asserted; the restart must find everything).
        subprocess.run(["mount", "-o", "remount,size=256m", mnt], check=True)
        server.proc.send_signal(signal.SIGTERM)
        server.proc.communicate(timeout=60)
        server = Server(db, log_path=log)
        c = server.client()
        verify(c.test.items, acknowledged, "after the restart")
        c.test.items.insert_one({"_id": "after"})
        server.stop()
        print("  disk full after %d documents (OutOfDiskSpace); none lost" % len(acknowledged))
    except Exception:
        # The server's log lives on the tmpfs that goes below: say it first.
        if server is not None:
            print("rockdoc-serve (exit status %s), its log:\n%s" % (server.proc.poll(), server.tail()))
        raise
    finally:
        subprocess.run(["umount", "-l", mnt])


def descriptors(scratch):
    # A limit that cannot hold the engine's share and one connection: refused
    # at start, loudly, rather than served until it breaks.
    low = subprocess.run([SERVER, "--db", os.path.join(scratch, "db"), "--port", "0"],
                         capture_output=True, text=True, timeout=60,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)))
    assert low.returncode == 1 and "open-file limit (64) is too low" in low.stderr, \
        (low.returncode, low.stderr)
    server = Server(os.path.join(scratch, "db"), nofile=256)
    idle = []
    for _ in range(300):
        s = socket.create_connection(("127.0.0.1", server.port))
        idle.append(s)
    # The event: each socket is either served (a command answers) or closed
    # by the server; none may hang.
    served, refused = [], []
    for s in idle:
        s.settimeout(30)
        try:
            reply = raw_command(s, {"ping": 1, "$db": "admin"})
            assert reply["ok"] == 1
            served.append(s)
        except (ConnectionError, OSError) as e:
            if isinstance(e, socket.timeout):
                raise AssertionError("a connection past the limit hangs instead of being refused")
            refused.append(s)
    assert refused, "300 connections under a 256-descriptor limit: none refused"
    assert len(served) < 256, len(served)
    # Room for a driver (its monitors and pool), then writes while the idle
    # connections stay open.
    for s in served[:8]:
        s.close()
    c = server.client(maxPoolSize=2)
    coll = c.test.items
    acknowledged = []
    for i in range(40):
        coll.insert_many([{"_id": i * 100 + j, "pad": "y" * 1000} for j in range(100)])
        acknowledged.extend(i * 100 + j for j in range(100))
        coll.create_index([("k%d" % (i % 5), 1)])
    verify(coll, acknowledged, "under the descriptor limit")
    c.close()
    for s in served[8:] + refused:
        s.close()
    server.stop()  # exits 0: the database closed cleanly
    print("  %d idle connections served, %d refused; %d writes kept" %
          (len(served), len(refused), len(acknowledged)))


def session_flood(scratch):
    server = Server(os.path.join(scratch, "db"), ["--auth"])
    server.client().admin.command("createUser", "boss", pwd="pencil", roles=["root"])
    boss = server.client(username="boss", password="pencil", authSource="admin")
    boss.test.items.insert_one({"_id": "seed"})
    done = threading.Event()
    served = [0]
    failures = []

    def logged_in():
        try:
            while not done.is_set():
                assert boss.test.items.find_one({"_id": "seed"}) == {"_id": "seed"}
                boss.test.items.insert_one({"pad": served[0]})
                served[0] += 1
        except Exception as e:  # reported below
            failures.append(e)
    t = threading.Thread(target=logged_in)
    t.start()
    s = socket.create_connection(("127.0.0.1", server.port))
    for i in range(5000):
        lsid = {"id": bson.Binary(uuid.uuid4().bytes, 4)}
        assert raw_command(s, {"ping": 1, "$db": "admin", "lsid": lsid})["ok"] == 1
    s.close()
    done.set()
    t.join()
    assert not failures, failures
    assert served[0] > 0, "the logged-in client was never served"
    sessions = boss.admin.command("serverStatus")["logicalSessionRecordCache"]["activeSessionsCount"]
    assert sessions <= 2, "%d sessions after 5,000 unauthenticated pings" % sessions
    verify(boss.test.items, ["seed"], "after the flood")
    server.stop()
    print("  5,000 unauthenticated sessions refused state; the logged-in client served %d times"
          % served[0])


SCENARIOS = [("sigkill", sigkill), ("disk_full", disk_full), ("descriptors", descriptors),
             ("session_flood", session_flood), ("change_streams", change_streams)]


def main():
    global SERVER
    if len(sys.argv) == 3 and sys.argv[1] == "--change-stream-child":
        watching_child(sys.argv[2])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--only")
    args = parser.parse_args()
    SERVER = args.server
    failed = 0
    for name, scenario in SCENARIOS:
        if args.only and name != args.only:
            continue
        scratch = tempfile.mkdtemp(prefix="rockdoc-reliability-")
        try:
            scenario(scratch)
            print("pass", name)
        except Skip as e:
            print("SKIP %s: %s" % (name, e))
        except Exception:
            failed += 1
            print("FAIL", name)
            traceback.print_exc()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        sys.stdout.flush()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
