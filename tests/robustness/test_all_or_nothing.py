"""All or nothing: one invalid WorkloadRun and no generated object is written, anywhere.

In-process through ``run_krm`` for the many shapes of failure, then with the real kpt: a
failing ``kpt fn render`` leaves the package byte-identical, and a successful one changes the
user's files only by the documented local-config annotation.
"""

from __future__ import annotations

import copy
import difflib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.entry.run import run_krm
from tests.e2e.helpers import copy_example, load_docs, need, run, snapshot
from tests.robustness.helpers import (
    IMAGE,
    REGISTRY,
    dump,
    generated,
    load,
    mpi_run,
    node,
    nodes,
    rl,
)

GOOD = mpi_run("good")


def _pvc(name: str, mode: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": [mode], "resources": {"requests": {"storage": "1Gi"}}},
    }


FAILURES: dict[str, tuple[list[dict[str, Any]], dict[str, Any] | None, str]] = {
    "one-run-with-a-type-error": (
        [GOOD, mpi_run("bad", numNodes="2")],
        None,
        "WorkloadRun bad: spec.numNodes",
    ),
    "one-run-asking-for-more-nodes-than-exist": (
        [GOOD, mpi_run("big", numNodes=3)],
        None,
        "need 3 (numNodes), found 2",
    ),
    "one-run-with-an-unknown-field": (
        [GOOD, mpi_run("typo", nodeSelector={"a": "b"})],
        None,
        "'nodeSelector' belongs under spec.target.nodeSelector",
    ),
    "two-runs-with-the-same-name": (
        [GOOD, copy.deepcopy(GOOD)],
        None,
        "two WorkloadRuns have this name",
    ),
    "override-naming-an-object-that-is-not-generated": (
        [
            GOOD,
            mpi_run(
                "dep",
                overrides=[
                    {
                        "when": {},
                        "dependencies": [
                            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nope"}}
                        ],
                    }
                ],
            ),
        ],
        None,
        "spec.overrides[0]",
    ),
    "read-write-once-claim-shared-by-workers": (
        [
            GOOD,
            mpi_run(
                "rwo",
                volumes=[{"name": "c", "persistentVolumeClaim": {"claimName": "rwo"}}],
                volumeMounts=[{"name": "c", "mountPath": "/c"}],
            ),
            _pvc("rwo", "ReadWriteOnce"),
        ],
        None,
        "PersistentVolumeClaim 'rwo' has accessModes ['ReadWriteOnce']",
    ),
    "bad-function-config-option": (
        [GOOD],
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "1"}},
        "functionConfig data.x: unknown option",
    ),
    "registry-password-variable-unset": ([GOOD], REGISTRY, "NGC_API_KEY"),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_any_invalid_run_means_no_object_is_generated(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NGC_API_KEY", raising=False)
    runs, fc, fragment = FAILURES[case]
    items = [*copy.deepcopy(runs), *nodes(2)]
    data = dump(rl(items, fc))
    out = run_krm(data)
    assert out.exit_code == 1
    assert any(fragment in line for line in out.stderr), out.stderr
    assert out.stderr[-1].endswith("nothing rendered")
    answer = load(out.stdout)
    assert answer["items"] == items, "the input items come back unchanged, nothing added"
    assert generated(out.stdout) == []
    assert any(r["severity"] == "error" for r in answer["results"])


def test_previously_generated_objects_survive_a_failing_run_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = run_krm(dump(rl([GOOD, *nodes(2)])))
    assert first.exit_code == 0
    previous = load(first.stdout)["items"]
    assert generated(first.stdout)
    broken = copy.deepcopy(previous)
    for it in broken:
        if it["kind"] == "WorkloadRun":
            it["spec"]["numNodes"] = "two"
    out = run_krm(dump(rl(broken)))
    assert out.exit_code == 1
    assert load(out.stdout)["items"] == broken


def test_failing_plain_stream_writes_nothing() -> None:
    out = run_krm(yaml.safe_dump_all([GOOD, mpi_run("bad", numNodes=0), *nodes(2)]).encode())
    assert out.exit_code == 1
    assert out.stdout == ""


def test_warnings_alone_do_not_block_the_render() -> None:
    out = run_krm(dump(rl([GOOD, *nodes(2), node("gpu-node-03", cordoned=True)])))
    assert out.exit_code == 0
    assert any("cordoned" in line for line in out.stderr)
    assert generated(out.stdout)


# --- with the real kpt ----------------------------------------------------------------------------

SECOND_RUN = """\
# a second run, in its own file
apiVersion: nvcre.nvidia.com/v1alpha1
kind: WorkloadRun
metadata:
  name: second-workload # comment kept
spec:
  image: {image}
  framework:
    torch:
      script: /workspace/train.py
  numNodes: 2
"""


def _package(tmp_path: Path) -> Path:
    pkg = copy_example("kpt-basic", tmp_path)
    (pkg / "second.yaml").write_text(SECOND_RUN.format(image=IMAGE))
    return pkg


def _break_second(pkg: Path) -> None:
    f = pkg / "second.yaml"
    f.write_text(f.read_text().replace("numNodes: 2", "numNodes: 2\n  envv: []"))


@pytest.mark.e2e
def test_kpt_render_with_one_invalid_run_fails_and_leaves_the_package_unchanged(
    tmp_path: Path,
) -> None:
    kpt = need("kpt")
    pkg = _package(tmp_path)
    _break_second(pkg)
    before = snapshot(pkg)
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert proc.returncode != 0
    assert "WorkloadRun second-workload: spec.envv: unknown field 'envv'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert snapshot(pkg) == before
    assert not (pkg / "generated").exists()


@pytest.mark.e2e
def test_kpt_failure_after_a_success_keeps_the_previous_generated_files(tmp_path: Path) -> None:
    kpt = need("kpt")
    pkg = _package(tmp_path)
    ok = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert ok.returncode == 0, ok.stderr
    assert sorted(p.name for p in (pkg / "generated").iterdir()) == [
        "my-workload.yaml",
        "second-workload.yaml",
    ]
    _break_second(pkg)
    before = snapshot(pkg)
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert proc.returncode != 0
    assert snapshot(pkg) == before


def _without_local_config(doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    ann = doc.get("metadata", {}).get("annotations") or {}
    ann.pop("config.kubernetes.io/local-config", None)
    if "annotations" in doc.get("metadata", {}) and not ann:
        del doc["metadata"]["annotations"]
    return doc


@pytest.mark.e2e
def test_kpt_render_keeps_every_user_object_except_for_the_local_config_annotation(
    tmp_path: Path,
) -> None:
    kpt = need("kpt")
    pkg = _package(tmp_path)
    user_files = sorted(p for p in pkg.iterdir() if p.is_file() and p.suffix == ".yaml")
    other_files = {p: p.read_bytes() for p in pkg.iterdir() if p.is_file() and p.suffix != ".yaml"}
    assert other_files, "the example's Kptfile and .krmignore"
    before = {p.name: load_docs(p) for p in user_files}
    text_before = {p.name: p.read_text() for p in user_files}
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert proc.returncode == 0, proc.stderr
    assert {p: p.read_bytes() for p in other_files} == other_files
    for p in user_files:
        after = load_docs(p)
        assert [_without_local_config(d) for d in after] == [
            _without_local_config(d) for d in before[p.name]
        ], p.name
        for d in after:
            if d["kind"] in ("WorkloadRun", "Node"):
                assert d["metadata"]["annotations"]["config.kubernetes.io/local-config"] == "true"
        # comments survive
        for line in text_before[p.name].splitlines():
            if line.lstrip().startswith("#"):
                assert line in p.read_text(), (p.name, line)
    assert sorted(p.name for p in pkg.iterdir() if p.is_file()) == sorted(
        p.name for p in [*user_files, *other_files]
    )


_LOCAL_LINE = re.compile(r"^ +config\.kubernetes\.io/local-config: ['\"]true['\"]\n", re.M)
_FLOW_ANN = re.compile(r", annotations: \{config\.kubernetes\.io/local-config: 'true'\}")
_FLOW_KEY = re.compile(r", config\.kubernetes\.io/local-config: 'true'")


def without_added_annotation(text: str) -> str:
    """``text`` minus what adding the local-config annotation may insert (block or flow)."""
    text = _FLOW_KEY.sub("", _FLOW_ANN.sub("", text))
    text = _LOCAL_LINE.sub("", text)
    lines = text.splitlines(keepends=True)
    out = []
    for i, line in enumerate(lines):
        if line.strip() == "annotations:":
            indent = len(line) - len(line.lstrip())
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= indent:
                continue  # an annotations block that held only the added line
        out.append(line)
    return "".join(out)


def user_file_diffs(before: dict[str, str], pkg: Path) -> dict[str, list[str]]:
    """Per user file, the diff left once the local-config annotation is taken out of both."""
    out: dict[str, list[str]] = {}
    for name, original in before.items():
        text = without_added_annotation(original)
        after = without_added_annotation((pkg / name).read_text())
        if after != text:
            out[name] = list(
                difflib.unified_diff(text.splitlines(), after.splitlines(), lineterm="", n=0)
            )
    return out


@pytest.mark.e2e
def test_kpt_render_changes_user_files_only_by_the_local_config_annotation(
    tmp_path: Path,
) -> None:
    kpt = need("kpt")
    pkg = _package(tmp_path)
    before = {p.name: p.read_text() for p in sorted(pkg.iterdir()) if p.is_file()}
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert proc.returncode == 0, proc.stderr
    assert user_file_diffs(before, pkg) == {}
    assert (pkg / "Kptfile").read_text() == before["Kptfile"]
    assert (pkg / "fn-config.yaml").read_text() == before["fn-config.yaml"]
