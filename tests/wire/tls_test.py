#!/usr/bin/env python3
"""rockdoc-serve's TLS (--tlsMode, --tlsCertificateKeyFile, --tlsCAFile) with
real clients: pymongo, the Node.js driver and mongosh.

    tls_test.py --server BUILD/tools/rockdoc-serve

Makes a CA, a server certificate (CN and SAN 127.0.0.1, SAN localhost), a
client certificate, and a second CA with a client certificate of its own,
with the `openssl` command into a scratch directory; then starts servers
on ephemeral loopback ports and checks: under requireTLS the three clients
connect over TLS and run commands, a client in clear is closed, and a
malformed ClientHello leaves the server serving; allowTLS serves TLS and
plain clients on one port; with --tlsCAFile a client certificate from
that CA is required (a client without one, or with one from the other CA,
is refused), and --tlsAllowConnectionsWithoutCertificates lets the former
in; an encrypted key loads with its password, which getCmdLineOpts never
shows; bad files and combinations stop the server at startup with exit
status 2 and a message. No timing is asserted: a refusal is the server
closing the connection (or the handshake failing). Exits 77 when pymongo or
openssl is missing; the Node.js steps are skipped with a message when the
npm packages are not installed (scripts/install-deps.sh).
"""
import argparse
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile

from pymongo_harness import pymongo, run, start_server, test  # exits 77 without pymongo
import bson

WIRE_DIR = os.path.dirname(os.path.abspath(__file__))
MONGOSH = os.path.join(WIRE_DIR, "node_modules", ".bin", "mongosh")
SERVER = None
PKI = None  # the scratch directory with the certificates
SCRATCH = None


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_pki(d):
    """ca.pem, server.pem (certificate + key), client.pem; other-ca.pem and
    other-client.pem; server-encrypted.pem (its key under 'secret');
    mismatch.pem (the server certificate with the client's key)."""
    def path(name):
        return os.path.join(d, name)

    def ca(name):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path(name + ".key"),
                "-out", path(name + ".pem"), "-days", "2", "-subj", "/CN=rockdoc test " + name)

    def cert(name, cn, ca_name, ext):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", path(name + ".key"),
                "-out", path(name + ".csr"), "-subj", "/CN=" + cn)
        with open(path(name + ".ext"), "w") as f:
            f.write(ext + "\n")
        openssl("x509", "-req", "-in", path(name + ".csr"), "-CA", path(ca_name + ".pem"),
                "-CAkey", path(ca_name + ".key"), "-CAcreateserial", "-out", path(name + ".crt"),
                "-days", "2", "-extfile", path(name + ".ext"))
        with open(path(name + ".pem"), "w") as out:
            for part in (".crt", ".key"):
                with open(path(name + part)) as f:
                    out.write(f.read())

    ca("ca")
    ca("other-ca")
    cert("server", "127.0.0.1", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost")
    cert("client", "rockdoc test client", "ca", "extendedKeyUsage=clientAuth")
    cert("other-client", "rockdoc test intruder", "other-ca", "extendedKeyUsage=clientAuth")
    openssl("pkey", "-in", path("server.key"), "-aes256", "-passout", "pass:secret",
            "-out", path("server-encrypted.key"))
    for name, parts in (("server-encrypted.pem", ("server.crt", "server-encrypted.key")),
                        ("mismatch.pem", ("server.crt", "client.key"))):
        with open(path(name), "w") as out:
            for part in parts:
                with open(path(part)) as f:
                    out.write(f.read())
    return path


class Server:
    """One rockdoc-serve over a fresh directory, with `args`."""
    count = 0

    def __init__(self, *args):
        Server.count += 1
        db = os.path.join(SCRATCH, "db%d" % Server.count)
        self.log_path = db + ".log"
        self.proc, self.port = start_server(
            [SERVER, "--db", db, "--port", "0", "--cacheSizeGB", "0.25"] + list(args),
            self.log_path)
        self.uri = "mongodb://127.0.0.1:%d/" % self.port

    def client(self, **kw):
        return pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=10000, **kw)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0 and "shut down cleanly" in out, (out, self.log())


def hello_message():
    body = struct.pack("<I", 0) + b"\x00" + bson.encode({"hello": 1, "$db": "admin"})
    return struct.pack("<iiii", 16 + len(body), 1, 0, 2013) + body


def read_reply(sock):
    """The next reply's bytes, or b"" when the server closed first."""
    data = b""
    while len(data) < 16 or len(data) < struct.unpack("<i", data[:4])[0]:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return b""
        if not chunk:
            return b""
        data += chunk
    return data


def plain_hello(port):
    """A hello in clear: its reply, or b"" when the server closes."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(hello_message())
        return read_reply(s)


def tls_hello(port, cert=None, ca="ca.pem"):
    """A hello over TLS with Python's ssl module, presenting `cert` (a PEM
    of certificate and key) or none: the reply, or b"" when the handshake or
    the connection was refused."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(PKI(ca))
    if cert:
        ctx.load_cert_chain(PKI(cert))
    try:
        with socket.create_connection(("127.0.0.1", port)) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                s.sendall(hello_message())
                return read_reply(s)
    except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
        return b""


def tls_uri(server, **params):
    q = {"tls": "true", "tlsCAFile": PKI("ca.pem")}
    q.update(params)
    return server.uri + "?" + "&".join("%s=%s" % kv for kv in q.items())


def node_installed():
    return shutil.which("node") is not None and os.path.isdir(
        os.path.join(WIRE_DIR, "node_modules", "mongodb"))


NODE_SCRIPT = r"""
const { MongoClient } = require('mongodb');
(async () => {
  const c = new MongoClient(process.argv[1], { serverSelectionTimeoutMS: 10000 });
  await c.connect();
  const coll = c.db('tls').collection('node');
  await coll.insertOne({ _id: 1, over: 'tls' });
  const doc = await coll.findOne({ _id: 1 });
  if (!doc || doc.over !== 'tls') throw new Error('read back ' + JSON.stringify(doc));
  await c.close();
  console.log('node driver over TLS: ok');
})().catch((e) => { console.error(e); process.exit(1); });
"""


def node(uri):
    subprocess.run(["node", "-e", NODE_SCRIPT, uri], check=True, cwd=WIRE_DIR, timeout=120)


def mongosh(uri, *args):
    home = os.path.join(SCRATCH, "home")
    os.makedirs(home, exist_ok=True)
    out = subprocess.run([MONGOSH, uri, "--quiet"] + list(args) + [
        "--eval", "db.getSiblingDB('tls').sh.insertOne({via: 'mongosh'}); "
                  "print('read back', db.getSiblingDB('tls').sh.countDocuments({}) > 0)"],
        capture_output=True, text=True, env=dict(os.environ, HOME=home), timeout=120)
    assert out.returncode == 0 and "read back true" in out.stdout, (out.stdout, out.stderr)


@test
def require_tls_serves_the_drivers_and_mongosh_and_refuses_plain_text():
    with Server("--tlsMode", "requireTLS", "--tlsCertificateKeyFile", PKI("server.pem")) as s:
        c = s.client(tls=True, tlsCAFile=PKI("ca.pem"))
        c.tls.c.insert_one({"_id": 1})
        assert c.tls.c.find_one() == {"_id": 1}
        net = c.admin.command("getCmdLineOpts")["parsed"]["net"]
        assert net["tls"] == {"mode": "requireTLS", "certificateKeyFile": PKI("server.pem")}, net
        # The server's name is checked by the client against the SAN.
        with pymongo.MongoClient("mongodb://localhost:%d/" % s.port, tls=True,
                                 tlsCAFile=PKI("ca.pem"),
                                 serverSelectionTimeoutMS=10000) as by_name:
            assert by_name.admin.command("ping")["ok"] == 1
        assert plain_hello(s.port) == b""
        assert "not TLS, and --tlsMode is requireTLS" in s.log()
        # Bytes that begin like a ClientHello and are not one.
        with socket.create_connection(("127.0.0.1", s.port)) as bad:
            bad.sendall(b"\x16\x03\x01\x00\x20\x01" + b"\xff" * 32)
            assert read_reply(bad) == b""
        assert tls_hello(s.port) != b""
        if node_installed():
            node(tls_uri(s))
            mongosh(tls_uri(s))
            mongosh(s.uri, "--tls", "--tlsCAFile", PKI("ca.pem"))
        else:
            print("SKIP (node): the npm packages are not installed in tests/wire/node_modules")
        assert c.admin.command("ping")["ok"] == 1


@test
def allow_tls_serves_both_on_one_port():
    for mode in ("allowTLS", "preferTLS"):
        with Server("--tlsMode", mode, "--tlsCertificateKeyFile", PKI("server.pem")) as s:
            over_tls = s.client(tls=True, tlsCAFile=PKI("ca.pem"))
            plain = s.client()
            over_tls.tls.c.insert_one({"_id": "tls"})
            plain.tls.c.insert_one({"_id": "plain"})
            assert over_tls.tls.c.count_documents({}) == 2
            assert plain.tls.c.count_documents({}) == 2
            assert plain_hello(s.port) != b""
            assert tls_hello(s.port) != b""
            if node_installed():
                node(tls_uri(s))


@test
def a_client_certificate_is_required_with_a_ca_file():
    with Server("--tlsMode", "requireTLS", "--tlsCertificateKeyFile", PKI("server.pem"),
                "--tlsCAFile", PKI("ca.pem")) as s:
        c = s.client(tls=True, tlsCAFile=PKI("ca.pem"), tlsCertificateKeyFile=PKI("client.pem"))
        assert c.admin.command("ping")["ok"] == 1
        assert tls_hello(s.port, cert="client.pem") != b""
        assert tls_hello(s.port) == b""
        assert tls_hello(s.port, cert="other-client.pem") == b""
        assert "TLS handshake" in s.log(), s.log()
        if node_installed():
            node(tls_uri(s, tlsCertificateKeyFile=PKI("client.pem")))
            mongosh(tls_uri(s, tlsCertificateKeyFile=PKI("client.pem")))
        opts = c.admin.command("getCmdLineOpts")["parsed"]["net"]["tls"]
        assert opts["CAFile"] == PKI("ca.pem"), opts


@test
def connections_without_certificates_may_be_allowed():
    with Server("--tlsMode", "requireTLS", "--tlsCertificateKeyFile", PKI("server.pem"),
                "--tlsCAFile", PKI("ca.pem"), "--tlsAllowConnectionsWithoutCertificates") as s:
        assert tls_hello(s.port) != b""
        assert tls_hello(s.port, cert="client.pem") != b""
        assert tls_hello(s.port, cert="other-client.pem") == b""


@test
def an_encrypted_key_and_its_password_never_shown():
    with Server("--tlsMode", "requireTLS", "--tlsCertificateKeyFile",
                PKI("server-encrypted.pem"), "--tlsCertificateKeyFilePassword", "secret") as s:
        c = s.client(tls=True, tlsCAFile=PKI("ca.pem"))
        opts = c.admin.command("getCmdLineOpts")
        assert "secret" not in repr(opts), opts
        assert opts["parsed"]["net"]["tls"]["certificateKeyFilePassword"] == "<password>"


def refused(expect, *args):
    out = subprocess.run([SERVER, "--db", os.path.join(SCRATCH, "never"), "--port", "0"] +
                         list(args), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and expect in out.stderr, (out.returncode, out.stderr)
    assert not os.path.exists(os.path.join(SCRATCH, "never")), "the database was opened"


@test
def bad_files_and_combinations_stop_the_server():
    pem = PKI("server.pem")
    refused("needs --tlsCertificateKeyFile", "--tlsMode", "requireTLS")
    refused("cannot read --tlsCertificateKeyFile", "--tlsMode", "requireTLS",
            "--tlsCertificateKeyFile", PKI("missing.pem"))
    refused("holds no PEM certificate", "--tlsMode", "requireTLS",
            "--tlsCertificateKeyFile", PKI("server.ext"))
    refused("the key does not match the certificate", "--tlsMode", "requireTLS",
            "--tlsCertificateKeyFile", PKI("mismatch.pem"))
    refused("holds no private key", "--tlsMode", "requireTLS",
            "--tlsCertificateKeyFile", PKI("server.crt"))
    refused("holds no private key", "--tlsMode", "requireTLS",
            "--tlsCertificateKeyFile", PKI("server-encrypted.pem"),
            "--tlsCertificateKeyFilePassword", "wrong")
    refused("cannot read --tlsCAFile", "--tlsMode", "requireTLS", "--tlsCertificateKeyFile", pem,
            "--tlsCAFile", PKI("missing-ca.pem"))
    refused("--tlsCAFile", "--tlsMode", "requireTLS", "--tlsCertificateKeyFile", pem,
            "--tlsCAFile", PKI("server.ext"))
    refused("--tlsMode is disabled", "--tlsCertificateKeyFile", pem)
    refused("needs --tlsCAFile", "--tlsMode", "requireTLS", "--tlsCertificateKeyFile", pem,
            "--tlsAllowConnectionsWithoutCertificates")
    refused("--tlsMode must be", "--tlsMode", "sslOnly")
    refused("tlsFIPSMode", "--tlsFIPSMode")  # an unsupported flag: refused, not ignored


def main():
    global SERVER, PKI, SCRATCH
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    args = parser.parse_args()
    SERVER = args.server
    if shutil.which("openssl") is None:
        print("SKIP: the openssl command is not installed (scripts/install-deps.sh)")
        sys.exit(77)
    SCRATCH = tempfile.mkdtemp(prefix="rockdoc-tls-")
    try:
        PKI = make_pki(os.path.join(SCRATCH))
        run("pymongo %s, %s" % (pymongo.version, ssl.OPENSSL_VERSION))
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)


if __name__ == "__main__":
    main()
