"""Every script that runs in a pod is shellchecked by `make check` (tests/pods/shellcheck.py lists them)."""

from __future__ import annotations

from pathlib import Path

from tests.pods.shellcheck import SCRIPTS

PACKAGE = Path(__file__).resolve().parents[2] / "hera_volcano"


def test_every_shell_script_in_the_package_is_checked() -> None:
    found = {
        (str(p.parent.parent.relative_to(PACKAGE.parent)).replace("/", "."), p.name)
        for p in PACKAGE.rglob("scripts/*.sh")
    }
    checked = {(package, name) for package, name, _ in SCRIPTS}
    assert found == checked


def test_every_script_reaches_its_process_unchanged_through_kubernetes_expansion() -> None:
    """The kubelet expands `$(NAME)` and turns `$$` into `$` in a container's command and arguments: the scripts
    hold neither (with every variable their containers set defined)."""
    import hera_volcano as hv
    from hera_volcano.kube import pod_scripts
    from tests.builders.podsim import kube_expand
    from tests.job_steps import job_step

    follower = hv.follow_logs_template(job_step("j"), outputs=["loss"])
    job = hv.mpi_job(image="x:1", program=hv.Program.command(["a"])).to_dict()
    [wait] = job["spec"]["tasks"][0]["template"]["spec"]["initContainers"]
    env = {e.name: "x" for e in follower.env} | {e["name"]: "x" for e in wait["env"]}
    assert kube_expand(follower.args[0], env) == follower.args[0], "the log follower's program"
    for arg in wait["command"]:
        assert kube_expand(arg, env) == arg, "the wait's command"
    for package, name, _ in SCRIPTS:
        text = pod_scripts.read(package, name)
        assert kube_expand(text, env) == text, name
