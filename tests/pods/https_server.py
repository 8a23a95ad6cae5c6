"""A stand-in API server over real HTTPS, for the in-cluster client of hera_volcano/pods: a CA and a server
certificate made with openssl for 127.0.0.1, a service account folder (token, ca.crt, namespace), and a handler the
test writes, which answers each request at once, as a stream of chunks, or not at all."""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    token: str
    body: bytes = b""
    content_type: str = ""


@dataclass
class Reply:
    """An answer: ``status`` and ``body`` at once, or ``chunks`` (a stream, each chunk sent as it comes); ``hang``
    answers nothing until the test sets it (or the client gives up)."""

    status: int = 200
    body: Any = None
    chunks: Iterable[bytes] | None = None
    hang: threading.Event | None = None


def status(code: int, reason: str, message: str = "") -> Reply:
    return Reply(code, {"kind": "Status", "status": "Failure", "reason": reason, "message": message, "code": code})


def events(*events: tuple[str, dict[str, Any]]) -> list[bytes]:
    """Watch events as the server sends them, one JSON object a line."""
    return [json.dumps({"type": t, "object": o}).encode() + b"\n" for t, o in events]


Handler = Callable[[Request], Reply]


@dataclass
class Server:
    folder: Path
    port: int
    requests: list[Request] = field(default_factory=list)
    handler: Handler = lambda request: Reply(404)

    @property
    def account(self) -> Path:
        return self.folder / "serviceaccount"

    def env(self) -> dict[str, str]:
        return {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(self.port)}


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """(ca.crt, server.crt, server.key): a CA and a certificate it signed for 127.0.0.1 (with the extensions a
    strict verifier asks for)."""
    ca_key, ca_crt = folder / "ca.key", folder / "ca.crt"
    key, csr, crt, ext = folder / "server.key", folder / "server.csr", folder / "server.crt", folder / "server.ext"

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca_crt),
            "-days", "2", "-subj", "/CN=stand-in-ca", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr), "-subj", "/CN=apiserver")
    ext.write_text(
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\nauthorityKeyIdentifier=keyid,issuer\n"
    )
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_crt), "-CAkey", str(ca_key), "-CAcreateserial",
            "-out", str(crt), "-days", "2", "-extfile", str(ext))  # fmt: skip
    return ca_crt, crt, key


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._answer()

    def do_DELETE(self) -> None:
        self._answer()

    def do_PATCH(self) -> None:
        self._answer()

    def _answer(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        token = self.headers.get("Authorization", "").removeprefix("Bearer ")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = Request(self.command, parts.path, query, token, body, self.headers.get("Content-Type", ""))
        state = self.server.state
        state.requests.append(request)
        reply = state.handler(request)
        if reply.hang is not None:
            reply.hang.wait(30)
            return
        try:
            if reply.chunks is None:
                body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body or {}).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(reply.status)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in reply.chunks:
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True
        except OSError:
            self.close_connection = True  # the client went away


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    state: Server


@contextmanager
def serving(folder: Path, namespace: str = "ns", token: str = "token-1") -> Iterator[Server]:
    """An HTTPS stand-in on 127.0.0.1, and its service account folder under ``folder``."""
    ca, crt, key = _certificates(folder)
    account = folder / "serviceaccount"
    account.mkdir()
    (account / "ca.crt").write_bytes(ca.read_bytes())
    (account / "token").write_text(token)
    (account / "namespace").write_text(namespace)
    httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(crt, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    httpd.state = Server(folder, httpd.server_address[1])
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd.state
    finally:
        httpd.shutdown()
        httpd.server_close()
