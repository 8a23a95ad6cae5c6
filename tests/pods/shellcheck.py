"""`make check`: shellcheck every shell script that runs in a pod, exactly as it is rendered, with no finding
allowed. Needs Debian's shellcheck (the Makefile installs it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from hera_volcano.kube import pod_scripts  # noqa: E402

#: (package, script, shell)
SCRIPTS = (("hera_volcano.builders", "resolve_workers.sh", "sh"), ("hera_volcano.builders", "pid1.sh", "sh"))


def main() -> int:
    if shutil.which("shellcheck") is None:
        print("shellcheck is not installed (apt-get install shellcheck)", file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory() as folder:
        for package, name, shell in SCRIPTS:
            text = pod_scripts.read(package, name)
            path = Path(folder) / name
            path.write_text(text)
            p = subprocess.run(["shellcheck", f"--shell={shell}", str(path)], capture_output=True, text=True)
            print(f"shellcheck {package.replace('.', '/')}/scripts/{name}: {'ok' if p.returncode == 0 else 'FINDINGS'}")
            if p.returncode != 0:
                failed += 1
                print(p.stdout.replace(str(path), name), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
