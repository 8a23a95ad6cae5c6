"""``hera-volcano render``: the GitOps files (workflows, ``rbac/``, ``queues/``) written from code, or checked for
drift.

Everything is computed in memory first (``tools.render``) and written all or none, so a failure (even halfway)
changes no file. Only files that carry render's header are ever replaced or removed.
"""

from __future__ import annotations

import argparse
import difflib
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hera_volcano.argo.defaults import NAMESPACE
from hera_volcano.cli import common as c
from hera_volcano.cli.files import write_files
from hera_volcano.cli.rbac import add_rbac_options, rbac_objects
from hera_volcano.cli.user_module import failure, module_workflows
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_map
from hera_volcano.tools.render import HEADER, as_template, bundled_files, module_files, run_once
from hera_volcano.volcano.queue import Queue

if TYPE_CHECKING:
    from hera_volcano.tools.rbac.need import Manifest


def _folders(files: Iterable[str]) -> set[str]:
    return {str(Path(p).parent) if Path(p).parent != Path(".") else "" for p in files}


def _read(path: Path) -> str | None:
    """A file's text, or None when it is not a readable UTF-8 file."""
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


def _generated(root: Path, folders: Iterable[str]) -> dict[str, str]:
    """The YAML files in ``folders`` that ``render`` wrote (they start with its header); nothing else is ours."""
    found: dict[str, str] = {}
    for folder in folders:
        base = root / folder if folder else root
        if not base.is_dir():
            continue
        for path in sorted(p for pattern in ("*.yaml", "*.yml") for p in base.glob(pattern)):
            text = None if path.name.startswith(".") else _read(path)
            if text is not None and text.startswith(HEADER):
                found[path.relative_to(root).as_posix()] = text
    return found


def drift(root: Path, expected: Mapping[str, str]) -> list[str]:
    """Unified diffs (or one-line notes) for every drifted, missing or extra file under ``root``."""
    generated = _generated(root, _folders(expected))
    out = []
    for path in sorted(set(expected) | set(generated)):
        want = expected.get(path)
        have = generated.get(path) if want is None else _read(root / path)
        if want == have:
            continue
        if have is None:
            out.append(f"missing: {path}\n")
        elif want is None:
            out.append(f"extra: {path} (rendered earlier, no longer by the code)\n")
        elif not have.startswith(HEADER):
            out.append(f"conflict: {path} exists but was not written by hera-volcano render\n")
        else:
            diff = difflib.unified_diff(
                have.splitlines(keepends=True), want.splitlines(keepends=True), f"{path} (committed)", f"{path} (code)"
            )
            out.append(f"drifted: {path}\n" + "".join(diff))
    return out


def _preflight(root: Path, files: Iterable[str]) -> None:
    """Refuse before writing anything: a path blocked by a file, or a file render did not write."""
    for path in files:
        target = root / path
        for parent in reversed(target.parents):
            if parent.exists() and not parent.is_dir():
                raise c.UsageError(f"cannot write {target}: {parent} is not a directory")
        if target.exists() or target.is_symlink():
            text = _read(target)
            if text is None or not text.startswith(HEADER):
                raise c.UsageError(f"refusing to overwrite {target}: it was not written by hera-volcano render")


def write(root: Path, files: Mapping[str, str]) -> list[str]:
    """Write changed files and remove files render wrote earlier that the code no longer renders, all or none.

    Only files that carry render's header are ever replaced or removed; anything else makes it stop first."""
    _preflight(root, files)
    stale = [p for p in _generated(root, _folders(files)) if p not in files]
    changed = {path: text for path, text in sorted(files.items()) if _read(root / path) != text}
    write_files({root / path: text for path, text in changed.items()} | {root / path: None for path in stale})
    return [f"wrote {path}" for path in changed] + [f"removed {path}" for path in stale]


def _parser() -> tuple[argparse.ArgumentParser, list[str]]:
    """The parser, and the ``dest`` of each option for a module only (what goes beside its workflows)."""
    p = c.parser(
        "hera-volcano render",
        "Write (or --check) the GitOps files of your module's workflows and Volcano Queues: one YAML file per workflow,"
        " beside them in rbac/ what they need to run (the RBAC and admission policy they run under, rbac.yaml, and the"
        " program our pods run, program.yaml), a kustomization.yaml that lists both (kubectl apply -k sets a namespace"
        " up), each queue in queues/ with its own. --bundled renders hera-volcano's own examples instead (workflows/"
        " and rbac/).",
    )
    p.add_argument("--out", metavar="DIR", default=".", help="root to render into (default: the current directory)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 with a diff if anything drifted")
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--module",
        metavar="PKG.MODULE[:FUNCTION]",
        help="your module's workflows and queues (its module-level ones, or what FUNCTION returns)",
    )
    what.add_argument(
        "--bundled", action="store_true", help="hera-volcano's own example workflows and their RBAC, nothing of yours"
    )
    mine = p.add_argument_group("what goes beside your module's workflows (not with --bundled)")
    mine.add_argument(
        "-n",
        "--namespace",
        type=c.namespace_name,
        default=None,
        help="the namespace of the workflows that name none, written into their files (their RBAC and program go"
        f" there too; default: {NAMESPACE}, and the files name none)",
    )
    mine.add_argument(
        "--service-account",
        type=c.service_account_name,
        default=None,
        metavar="NAME",
        help="the service account of the workflows that name none, written into their files (the RBAC grants it"
        " what their pods need; with --with-service-account it is created too)",
    )
    mine.add_argument(
        "--no-rbac",
        action="store_true",
        help="leave out the RBAC and admission policy (rbac/rbac.yaml); the pods' program is still written",
    )
    return p, ["namespace", "service_account", "no_rbac", *add_rbac_options(mine)]


def _module_files(args: argparse.Namespace) -> tuple[dict[str, str], list[str]]:
    """The files of ``--module``, and a note for each run-once Workflow written as a WorkflowTemplate."""
    found = module_workflows(args.module)

    def derive(*workflows: object) -> list[Manifest]:
        return rbac_objects(workflows, args)

    try:
        files = module_files(found, args.namespace, args.service_account, derive=None if args.no_rbac else derive)
    except ValidationError as e:
        raise failure(args.module, e) from None
    notes = [_run_once_note(w.to_dict()) for w in found if not isinstance(w, Queue) and run_once(w.to_dict())]
    return files, notes


def main(argv: Sequence[str]) -> int:
    p, module_only = _parser()
    args = p.parse_args(argv)
    if args.module is None and not args.bundled:
        raise c.UsageError(
            "name what to render: --module PKG.MODULE[:FUNCTION] (your workflows), or --bundled (hera-volcano's own"
            " examples)"
        )
    mine = [dest for dest in module_only if getattr(args, dest) != p.get_default(dest)]
    if args.bundled and mine:
        raise c.UsageError(
            "--bundled renders the repository's own files as they are: leave out --" + mine[0].replace("_", "-")
        )
    notes: list[str] = []
    if args.module is None:
        files = bundled_files()
    else:
        files, notes = _module_files(args)
    root = Path(args.out)
    if args.check:
        problems = drift(root, files)
        c.emit("".join(problems), None)
        if problems:
            again = shlex.join(["hera-volcano", "render", *(a for a in argv if a != "--check")])
            c.say(f"hera-volcano render: {len(problems)} file(s) out of sync; run {again}")
            return 1
        return 0
    try:
        changed = write(root, files)
    except OSError as e:
        raise c.UsageError(f"cannot write under {root}: {e.strerror or e}") from None
    c.emit("".join(line + "\n" for line in changed), None)
    for note in notes:
        c.say(f"hera-volcano render: {note}")
    return 0


def _run_once_note(workflow: Mapping[str, object]) -> str:
    """Why a run-once Workflow is in the folder as a WorkflowTemplate, and how to run it."""
    name = as_template(workflow)["metadata"]["name"]
    generate_name = as_map(workflow.get("metadata")).get("generateName")
    return (
        f"Workflow {generate_name} has only a generateName, which kubectl apply -k and Argo CD"
        f" cannot apply: written as WorkflowTemplate {name} ({name}.yaml); run it with"
        f" hera-volcano submit --from workflowtemplate/{name}"
    )
