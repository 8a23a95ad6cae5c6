"""What ``hera-volcano lint`` reports: findings located in a file, and the summary line under them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hera_volcano.shared.findings import Finding, Severity, printable


@dataclass(frozen=True)
class LintFinding:
    """A finding in a file: the line ``FILE:LINE: PATH: SEVERITY: MESSAGE`` of ``hera-volcano lint``.

    ``line`` counts from 1; it is None when the file has no such line (it cannot be read, say). The text form
    escapes control characters; the JSON form keeps the text as it is (JSON escapes them itself)."""

    file: str
    path: str
    severity: Severity
    message: str
    line: int | None = None

    def __str__(self) -> str:
        """One line whatever the file name, keys and values hold (control characters are escaped)."""
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return printable(f"{where}: {self.path}: {self.severity}: {self.message}")

    def to_dict(self) -> dict[str, str | int | None]:
        """The JSON form: ``{file, line, path, severity, message}``."""
        return {
            "file": self.file,
            "line": self.line,
            "path": self.path,
            "severity": self.severity,
            "message": self.message,
        }


def has_errors(findings: Iterable[LintFinding | Finding]) -> bool:
    """Whether any finding is an error (warnings never fail a lint)."""
    return any(f.severity == "error" for f in findings)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass(frozen=True)
class Summary:
    """How many errors and warnings a run found, in how many of the files it checked."""

    errors: int
    warnings: int
    files: int
    files_with_findings: int

    @classmethod
    def of(cls, findings: Sequence[LintFinding], files: int) -> Summary:
        return cls(
            errors=sum(f.severity == "error" for f in findings),
            warnings=sum(f.severity == "warning" for f in findings),
            files=files,
            files_with_findings=len({f.file for f in findings}),
        )

    def __str__(self) -> str:
        """``2 errors, 1 warning in 2 of 5 files``, or ``no problems in 5 files``."""
        if not self.errors and not self.warnings:
            return f"no problems in {_count(self.files, 'file')}"
        return (
            f"{_count(self.errors, 'error')}, {_count(self.warnings, 'warning')}"
            f" in {self.files_with_findings} of {_count(self.files, 'file')}"
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "errors": self.errors,
            "warnings": self.warnings,
            "files": self.files,
            "files_with_findings": self.files_with_findings,
        }
