"""Throwaway certificates for a test cluster, made with the ``openssl`` command (no Python crypto dependency).

One CA signs everything: serving certificates (with their IP and DNS names) and client certificates (common name
= user, organisations = groups), plus an EC key pair for service-account tokens. Shared by tests/cluster (a bare
control plane) and the single-node cluster of tests/e2e.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path


class PKIError(RuntimeError):
    """openssl is missing or failed; the message has its error output."""


_CNF = """\
[req]
distinguished_name = dn
prompt = no
[dn]
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = ${ENV::SAN}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


class PKI:
    """Certificates in one directory: ``ca.crt``/``ca.key``, ``NAME.crt``/``NAME.key``, ``sa.key``/``sa.pub``."""

    def __init__(self, directory: Path, days: int = 7) -> None:
        if shutil.which("openssl") is None:
            raise PKIError("the `openssl` command is needed to make the test cluster's certificates")
        self.dir = directory
        self.days = days
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "openssl.cnf").write_text(_CNF)
        self._openssl("genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key")
        self._openssl(
            f"req -x509 -new -key ca.key -config openssl.cnf -extensions ca -out ca.crt -days {days} -sha256",
            "-subj",
            "/CN=hera-volcano-test-ca",
        )
        self._openssl("genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out sa.key")
        self._openssl("pkey -in sa.key -pubout -out sa.pub")

    def path(self, name: str) -> Path:
        return self.dir / name

    @property
    def ca(self) -> Path:
        return self.dir / "ca.crt"

    def _openssl(self, command: str, *args: str, san: str = "DNS:unused") -> None:
        argv = ["openssl", *command.split(), *args]
        env = {**os.environ, "SAN": san}
        proc = subprocess.run(argv, cwd=self.dir, capture_output=True, text=True, check=False, env=env)
        if proc.returncode != 0:
            raise PKIError(f"{' '.join(argv)} failed:\n{proc.stderr.strip()}")

    def _issue(self, name: str, subject: str, section: str, san: str = "DNS:unused") -> tuple[Path, Path]:
        self._openssl(f"genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out {name}.key")
        self._openssl(f"req -new -key {name}.key -config openssl.cnf -out {name}.csr", "-subj", subject)
        serial = str(int.from_bytes(os.urandom(8), "big"))
        self._openssl(
            f"x509 -req -in {name}.csr -CA ca.crt -CAkey ca.key -extfile openssl.cnf -extensions {section} "
            f"-days {self.days} -sha256 -set_serial {serial} -out {name}.crt",
            san=san,
        )
        (self.dir / f"{name}.csr").unlink()
        return self.dir / f"{name}.crt", self.dir / f"{name}.key"

    def server(self, name: str, ips: Sequence[str] = (), dns: Sequence[str] = ()) -> tuple[Path, Path]:
        """A serving certificate for these addresses and names."""
        san = ",".join([*(f"IP:{ip}" for ip in ips), *(f"DNS:{d}" for d in dns)])
        return self._issue(name, f"/CN={name}", "server", san)

    def client(self, name: str, user: str, groups: Sequence[str] = ()) -> tuple[Path, Path]:
        """A client certificate: Kubernetes reads the user from CN and the groups from O."""
        subject = "".join(f"/O={g}" for g in groups) + f"/CN={user}"
        return self._issue(name, subject, "client")
