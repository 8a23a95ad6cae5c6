#!/usr/bin/env bash
# `make conformance`: Argo's own validators (the 3.7 and 4.1 lines) on the committed files, every bundled CLI output
# and generated variants. PYTHON is the project's interpreter (make passes the venv's).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
variants="$root/.cache/conformance/variants"
bash conformance/run.sh --test   # the harness's own Go tests
rm -rf "$variants"
"$python" conformance/variants.py "$variants"
bash conformance/run.sh workflows rbac "$variants"
