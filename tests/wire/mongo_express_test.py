#!/usr/bin/env python3
"""mongo-express 1.0's status page against rockdoc-serve (issue 39): the page
an admin opens first shows serverStatus' connections, globalLock and
opcounters, blank before rockdoc answered those sections. Starts
mongo-express (tests/wire/node_modules, installed by scripts/install-deps.sh)
on a free loopback port against the server, loads its home page in headless
Chromium as the lab's report is loaded (tests/lab_report_html_test.sh), and
checks the values the page shows against what this test did: exactly the
inserts it made, at least its queries, at least its own connection.

    mongo_express_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) only when mongo-express, pymongo or chromium is not
installed. Every wait is bounded: mongo-express's start, the page's load.
"""
import html.parser
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
APP = os.path.join(HERE, "node_modules", "mongo-express", "app.js")

if not os.path.exists(APP):
    print("SKIP: mongo-express is not installed in tests/wire/node_modules "
          "(scripts/install-deps.sh installs it from tests/wire/package-lock.json)")
    sys.exit(77)
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if chromium is None:
    print("SKIP: no chromium on PATH (scripts/install-deps.sh installs Debian's chromium)")
    sys.exit(77)
try:
    import pymongo
except ImportError:
    print("SKIP: pymongo is not installed (Debian: python3-pymongo)")
    sys.exit(77)

uri = sys.argv[1]


def free_port():
    """A port nobody listens on now: the kernel's pick for a socket bound to 0."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cells(html.parser.HTMLParser):
    """The texts of a page's table cells, in order."""

    def __init__(self):
        super().__init__()
        self.cells, self._in = [], False

    def handle_starttag(self, tag, attrs):
        if tag == "td":
            self._in = True
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self._in = False

    def handle_data(self, data):
        if self._in:
            self.cells[-1] += data


def value_after(cells, label):
    """The cell after the one labelled `label`, as an int."""
    for i, c in enumerate(cells):
        if c.strip() == label:
            text = cells[i + 1].strip()
            assert text.isdigit(), (label, text)
            return int(text)
    raise AssertionError("the page has no '%s': %s" % (label, cells))


def main():
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
    db = client.express
    db.things.insert_many([{"_id": i, "n": i} for i in range(7)])
    for i in range(3):
        assert db.things.find_one({"_id": i}) == {"_id": i, "n": i}

    port = free_port()
    env = dict(os.environ, ME_CONFIG_MONGODB_URL=uri, ME_CONFIG_MONGODB_ENABLE_ADMIN="true",
               ME_CONFIG_BASICAUTH_USERNAME="", PORT=str(port), VCAP_APP_HOST="127.0.0.1")
    scratch = tempfile.mkdtemp(prefix="rockdoc-mongo-express-")
    log_path = os.path.join(scratch, "mongo-express.log")
    with open(log_path, "w") as log:
        app = subprocess.Popen(["node", APP], cwd=os.path.dirname(APP), env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        url = "http://127.0.0.1:%d/" % port
        # Up when it answers HTTP (bounded: a start that hangs fails).
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if app.poll() is not None or time.monotonic() > deadline:
                with open(log_path) as f:
                    raise AssertionError("mongo-express did not start:\n" + f.read()[-3000:])
            time.sleep(0.1)
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--user-data-dir=" + os.path.join(scratch, "profile")]
        dom = subprocess.run([chromium] + flags + ["--dump-dom", url], capture_output=True,
                             text=True, timeout=120)
        assert dom.returncode == 0, dom.stderr[-2000:]
        page = Cells()
        page.feed(dom.stdout)
        assert "Server Status" in dom.stdout, dom.stdout[-2000:]
        assert "Turn on admin" not in dom.stdout
        shown = {label: value_after(page.cells, label)
                 for label in ("Current Connections", "Available Connections", "Active Clients",
                               "Total Inserts", "Total Queries", "Total Updates", "Total Deletes",
                               "Queued Operations")}
        print("mongo-express shows:", shown)
        assert shown["Total Inserts"] == 7, shown          # this test's, and nobody else's
        assert shown["Total Queries"] >= 3, shown
        assert shown["Current Connections"] >= 2, shown    # this test's client and mongo-express's
        assert shown["Available Connections"] > 0, shown
        assert shown["Active Clients"] >= 1, shown         # its own serverStatus
        assert shown["Queued Operations"] == 0, shown
        # The page's other figures, as the server reports them.
        status = client.admin.command("serverStatus")
        assert value_after(page.cells, "Total Updates") == status["opcounters"]["update"]
        print("mongo-express status page: pass")
    finally:
        app.terminate()
        try:
            app.wait(10)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
        shutil.rmtree(scratch, ignore_errors=True)


main()
