#!/usr/bin/env python3
"""Runs a client program against a fresh `rockdoc-serve` (tests/wire/).

    run_with_server.py --server BUILD/tools/rockdoc-serve [--unix] -- CMD ARGS...

Starts the server over a temporary directory on an ephemeral loopback port
(and, with --unix, a Unix socket beside it), replaces "{uri}" in the
command's arguments with its connection string (and "{dbpath}" with the
server's database directory; with --encrypted, the server encrypts it at
rest and "{keyfile}" is its key file), runs the command, then
stops the server with SIGTERM and checks that it shut down cleanly (exit
status 0, "shut down cleanly" on its output). Exits with the client's
status when that failed, 1 when the server misbehaved, and 77 (CTest's
skip) when the client says it cannot run (it exits 77 itself).
"""
import argparse
import base64
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--unix", action="store_true")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="one more argument for rockdoc-serve (e.g. --auth)")
    parser.add_argument("--encrypted", action="store_true",
                        help="--enableEncryption with a fresh key file, {keyfile}")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    scratch = tempfile.mkdtemp(prefix="rockdoc-wire-")
    try:
        # The smallest cache: many test servers share one machine, and each
        # would otherwise size its cache from the machine's whole memory.
        server_args = [args.server, "--db", os.path.join(scratch, "db"), "--port", "0",
                       "--cacheSizeGB", "0.25"]
        sock = os.path.join(scratch, "rockdoc.sock")
        if args.unix:
            server_args += ["--unix", sock, "--no-tcp"]
        server_args += args.server_arg
        keyfile = os.path.join(scratch, "db.key")
        if args.encrypted:
            # mongod's key file: the base64 of 32 random bytes, owner-only.
            fd = os.open(keyfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, base64.b64encode(os.urandom(32)) + b"\n")
            os.close(fd)
            server_args += ["--enableEncryption", "--encryptionKeyFile", keyfile]
        server = subprocess.Popen(server_args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        uri = None
        deadline = time.time() + 20
        while uri is None and time.time() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            sys.stdout.write("[server] " + line)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                uri = "mongodb://127.0.0.1:%s/" % m.group(1)
            elif "listening on unix:" in line:
                uri = "mongodb://" + urllib.parse.quote(sock, safe="") + "/"
        if uri is None:
            server.kill()
            print("rockdoc-serve did not start:", server.stderr.read(), file=sys.stderr)
            return 1
        sys.stdout.flush()
        # The client's home is scratch too (mongosh keeps logs and history there).
        env = dict(os.environ, HOME=os.path.join(scratch, "home"))
        os.mkdir(env["HOME"])
        try:
            dbpath = os.path.join(scratch, "db")
            client = subprocess.run(
                [a.replace("{uri}", uri).replace("{dbpath}", dbpath).replace("{keyfile}", keyfile)
                 for a in command],
                timeout=args.timeout, env=env)
        except FileNotFoundError:
            server.kill()
            print("SKIP: %s is not installed (scripts/install-deps.sh installs the clients)"
                  % command[0])
            return 77
        server.send_signal(signal.SIGTERM)
        try:
            out, err = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            print("rockdoc-serve did not stop within 30 s of SIGTERM", file=sys.stderr)
            return 1
        sys.stdout.write("".join("[server] " + l + "\n" for l in out.splitlines()))
        sys.stdout.write("".join("[server stderr] " + l + "\n" for l in err.splitlines()))
        if client.returncode != 0:
            return client.returncode
        if server.returncode != 0 or "shut down cleanly" not in out:
            print("rockdoc-serve did not shut down cleanly (status %d)" % server.returncode,
                  file=sys.stderr)
            return 1
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
