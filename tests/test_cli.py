"""The console script: the README's first command, render's outputs, the KRM and legacy modes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
FN = str(Path(sys.executable).with_name("workloadrun-fn"))
ENV = {"PATH": "/usr/bin:/bin", "NGC_API_KEY": "cli-test-password"}


def run(
    args: list[str], stdin: bytes = b"", cwd: Path = REPO
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [FN, *args], input=stdin, capture_output=True, cwd=cwd, env=ENV, timeout=120
    )


def kinds(text: bytes | str) -> list[str]:
    docs = [d for d in yaml.safe_load_all(text) if d]
    if len(docs) == 1 and docs[0].get("kind") == "ResourceList":
        docs = docs[0]["items"]
    return [d["kind"] for d in docs]


def test_readme_first_command_renders_the_fixture() -> None:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    first = blocks[0].strip()
    assert first.endswith("workloadrun-fn render fixtures/"), first
    assert "NGC_API_KEY=" in first
    proc = run(["render", "fixtures/"])
    assert proc.returncode == 0, proc.stderr.decode()
    k = kinds(proc.stdout)
    assert k.count("TrainJob") == 4 and k.count("TrainingRuntime") == 1 and k.count("Secret") == 1
    err = proc.stderr.decode()
    assert "group-0: 4 node(s): gpu-node-01, gpu-node-02, gpu-node-03, gpu-node-04" in err
    assert "untested nodes: none" in err


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text()
    second = re.findall(r"```sh\n(.*?)\n```", readme, re.S)[1].strip()
    assert second in (REPO / ".ci" / "run").read_text()


def test_render_json_output() -> None:
    proc = run(["render", "-o", "json", "fixtures/"])
    assert proc.returncode == 0
    objs = json.loads(proc.stdout)
    assert [o["kind"] for o in objs].count("TrainJob") == 4


def test_render_prints_only_generated_objects_without_orchestrator_annotations() -> None:
    proc = run(["render", "fixtures/"])
    text = proc.stdout.decode()
    assert "kind: Node" not in text and "kind: WorkloadRun" not in text
    assert "config.kubernetes.io/path" not in text


def test_krm_mode_on_the_fixture_resource_list() -> None:
    proc = run([], (REPO / "fixtures" / "krm" / "resourcelist.yaml").read_bytes())
    assert proc.returncode == 0, proc.stderr.decode()
    rl = yaml.safe_load(proc.stdout)
    assert rl["kind"] == "ResourceList" and rl["apiVersion"] == "config.kubernetes.io/v1"
    assert kinds(proc.stdout).count("TrainJob") == 4
    assert any(r["severity"] == "info" for r in rl["results"])


def test_plain_stream_in_plain_stream_out() -> None:
    wr = (REPO / "fixtures" / "workloadrun-basic-mpi.yaml").read_bytes()
    nodes = (REPO / "fixtures" / "nodes-16.yaml").read_bytes()
    proc = run([], wr + b"\n---\n" + nodes)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"kind: ResourceList" not in proc.stdout
    assert kinds(proc.stdout).count("TrainJob") == 4


def test_legacy_transformer_protocol(tmp_path: Path) -> None:
    cfg = tmp_path / "kust-plugin-config-123"
    cfg.write_text(
        "apiVersion: fn.nvcre.nvidia.com/v1alpha1\nkind: WorkloadRunRender\nmetadata:\n  name: r\n"
    )
    stream = (REPO / "fixtures" / "workloadrun-basic-mpi.yaml").read_bytes() + b"\n---\n"
    stream += (REPO / "fixtures" / "nodes-16.yaml").read_bytes()
    proc = run([str(cfg)], stream, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    k = kinds(proc.stdout)
    assert "WorkloadRun" not in k and "List" not in k and k.count("TrainJob") == 4


def test_legacy_generator_protocol_reads_the_inventory_relative_to_cwd(tmp_path: Path) -> None:
    (tmp_path / "inv.yaml").write_bytes((REPO / "fixtures" / "nodes-16.yaml").read_bytes())
    wr = yaml.safe_load((REPO / "fixtures" / "workloadrun-basic-mpi.yaml").read_text())
    wr["metadata"]["annotations"] = {"fn.nvcre.nvidia.com/inventory": "inv.yaml"}
    wr["argsOneLiner"] = "--ignored"
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(wr))
    proc = run([str(cfg)], b"", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert kinds(proc.stdout).count("TrainJob") == 4


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"remainder": "sometimes"}, "remainder"),
        ({"registryPassword": "hunter2"}, "registryPasswordEnv"),
        ({"colour": "blue"}, "unknown option"),
        ({"platform": "mars"}, "must be one of"),
    ],
    ids=["bad-remainder", "plain-password-refused", "unknown-option", "unknown-platform"],
)
def test_bad_function_options_are_refused(data: dict[str, str], needle: str) -> None:
    rl = yaml.safe_load((REPO / "fixtures" / "krm" / "resourcelist.yaml").read_text())
    rl["functionConfig"] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "f"},
        "data": data,
    }
    proc = run([], yaml.safe_dump(rl).encode())
    assert proc.returncode == 1
    assert needle in proc.stderr.decode()
    assert b"hunter2" not in proc.stdout + proc.stderr
    assert "TrainJob" not in kinds(proc.stdout)


def test_missing_file_is_a_clear_error() -> None:
    proc = run(["render", "nope.yaml"])
    assert proc.returncode == 2, "a missing file is a usage error"
    assert b"nope.yaml" in proc.stderr and b"Traceback" not in proc.stderr


_RUN_WITH = """
import sys
from krm_fn.entry import cli

def fake_main():
    sys.stdout.write("x" * 5_000_000 + "\\n")  # buffered: only a flush gets it out
    sys.stderr.write("a line on stderr\\n")
    {action}

cli.main = fake_main
cli.run()
"""


@pytest.mark.parametrize(
    ("action", "code", "stderr_tail"),
    [
        ("return None", 0, ""),
        ("sys.exit()", 0, ""),
        ("sys.exit(3)", 3, ""),
        ("sys.exit('workloadrun-fn: a message')", 1, "workloadrun-fn: a message\n"),
    ],
    ids=["returning-is-0", "exit-none-is-0", "an-int-is-kept", "a-message-is-printed-and-is-1"],
)
def test_the_console_script_leaves_without_a_teardown_but_flushes_everything_first(
    action: str, code: int, stderr_tail: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_WITH.format(action=action)],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == code
    assert proc.stdout == b"x" * 5_000_000 + b"\n"
    assert proc.stderr.decode() == "a line on stderr\n" + stderr_tail


def test_the_installed_script_and_python_m_use_the_run_entry_point() -> None:
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'workloadrun-fn = "krm_fn.entry.cli:run"' in pyproject
    assert "run()" in (REPO / "krm_fn" / "__main__.py").read_text()


def test_every_command_runs_without_the_cyclic_collector() -> None:
    code = (
        "import gc, sys\n"
        "from krm_fn.entry import cli\n"
        "cli.main = lambda: sys.stdout.write(f'collector on: {gc.isenabled()}\\n')\n"
        "cli.run()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"collector on: False\n"
