"""A few raw API calls as the cluster admin, with the standard library only (start-up and teardown must not
depend on the `kubernetes` package; the tests use it)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


class ApiError(RuntimeError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


class Api:
    def __init__(self, server: str, ca: Path, cert: Path, key: Path) -> None:
        self.server = server
        self.context = ssl.create_default_context(cafile=str(ca))
        self.context.load_cert_chain(str(cert), str(key))

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=30, context=self.context) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as e:
            raise ApiError(e.code, e.read().decode(errors="replace")[:2000]) from e
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def exists(self, path: str) -> bool:
        try:
            self.get(path)
            return True
        except ApiError as e:
            if e.status == 404:
                return False
            raise

    def apply(self, path: str, obj: dict[str, Any], manager: str = "hera-volcano-e2e") -> Any:
        """Server-side apply of ``obj`` at its named path."""
        return self.request(
            "PATCH",
            f"{path}?fieldManager={manager}&force=true",
            json.dumps(obj).encode(),
            "application/apply-patch+yaml",
        )
