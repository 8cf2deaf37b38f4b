"""Broken input through the real console script: a clear, located refusal, exit 1, no traceback.

Every case runs ``workloadrun-fn`` in a subprocess with the bytes on stdin and checks the exit
code, the stderr text (document, position or field path), that no traceback leaks, and that
stdout is empty (plain stream) or a ResourceList carrying exactly the input items plus results.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.robustness.helpers import (
    Proc,
    assert_clean_refusal,
    assert_stdout_is_echo_or_empty,
    dump,
    load,
    mpi_run,
    node,
    nodes,
    output_items,
    rl,
    run_all,
    run_fn,
)

RL_HEAD = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
CM = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"

# (input bytes, fragments stderr must contain)
BROKEN_STREAMS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "malformed-yaml-names-line-and-column": (
        CM + b"data: [unclosed\n",
        ("<stdin>: malformed YAML", "(line 6, column 1)"),
    ),
    "tab-indentation-names-the-line": (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n",
        ("<stdin>: malformed YAML", "line 4"),
    ),
    "list-document-is-not-an-object": (
        CM + b"---\n- a\n- b\n",
        ("<stdin>[1]: document is a list, not a Kubernetes object mapping",),
    ),
    "scalar-document-is-not-an-object": (
        b"just some text\n",
        ("<stdin>[0]: document is a str, not a Kubernetes object mapping",),
    ),
    "object-without-kind-named-by-index": (
        CM + b"---\napiVersion: v1\nmetadata: {name: y}\n",
        ("<stdin>[1]: object has no string kind",),
    ),
    "metadata-that-is-not-a-mapping": (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: [x]\n",
        ("<stdin>[0]: metadata of ConfigMap must be a mapping",),
    ),
    "resourcelist-without-items": (
        RL_HEAD,
        ("<stdin>: ResourceList has no 'items' (required by the KRM spec)",),
    ),
    "resourcelist-items-not-a-list": (
        RL_HEAD + b"items: {a: 1}\n",
        ("<stdin>: ResourceList 'items' must be a list, got dict",),
    ),
    "resourcelist-unknown-api-version": (
        b"apiVersion: config.kubernetes.io/v2\nkind: ResourceList\nitems: []\n",
        ("ResourceList apiVersion 'config.kubernetes.io/v2' is not supported",),
    ),
    "resourcelist-function-config-not-a-mapping": (
        RL_HEAD + b"items: []\nfunctionConfig: [1, 2]\n",
        ("<stdin>: ResourceList 'functionConfig' must be a mapping",),
    ),
    "resourcelist-item-not-a-mapping-named-by-index": (
        RL_HEAD + b"items:\n- 3\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n",
        ("<stdin> items[0]: document is a int, not a Kubernetes object mapping",),
    ),
    "non-utf8-byte-named-by-offset": (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n",
        ("<stdin>: input is not valid UTF-8 (byte 51)",),
    ),
    "utf16-input-refused-as-non-utf8": (
        "apiVersion: v1\n".encode("utf-16"),
        ("<stdin>: input is not valid UTF-8 (byte 0)",),
    ),
    "duplicate-top-level-key-names-the-key-and-line": (
        b"apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: x}\n",
        ("<stdin>: malformed YAML: duplicate key 'kind' (line 3, column 1)",),
    ),
    "duplicate-key-inside-a-resourcelist-item": (
        RL_HEAD + b"items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
        b"  data: {k: '1', k: '2'}\n",
        ("duplicate key 'k' (line 7, column 18)",),
    ),
    "duplicate-key-in-a-workloadrun-spec": (
        b"apiVersion: nvcre.nvidia.com/v1alpha1\nkind: WorkloadRun\nmetadata: {name: x}\n"
        b"spec:\n  numNodes: 2\n  numNodes: 4\n",
        ("duplicate key 'numNodes' (line 6, column 3)",),
    ),
    "non-scalar-mapping-key": (
        b"? [a, b]\n: c\n",
        ("<stdin>: malformed YAML: mapping keys must be scalars",),
    ),
    "unknown-local-tag-never-constructed": (
        CM + b"data: !mytag {a: b}\n",
        ("could not determine a constructor for the tag '!mytag'",),
    ),
}


@pytest.fixture(scope="module")
def broken_outcomes() -> dict[str, Proc]:
    return run_all({key: data for key, (data, _) in BROKEN_STREAMS.items()}, timeout=20)


@pytest.mark.parametrize("case", list(BROKEN_STREAMS))
def test_broken_document_is_refused_with_its_location(
    case: str, broken_outcomes: dict[str, Proc]
) -> None:
    data, fragments = BROKEN_STREAMS[case]
    proc = broken_outcomes[case]
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr
    assert proc.stderr.rstrip().endswith("nothing rendered")
    if case != "resourcelist-item-not-a-mapping-named-by-index":  # see test_regressions.py
        assert_stdout_is_echo_or_empty(data, proc.stdout)


def test_plain_stream_refusal_writes_nothing_on_stdout(broken_outcomes: dict[str, Proc]) -> None:
    assert broken_outcomes["list-document-is-not-an-object"].stdout == ""
    assert broken_outcomes["non-utf8-byte-named-by-offset"].stdout == ""


def test_resourcelist_refusal_answers_with_a_resourcelist_of_results(
    broken_outcomes: dict[str, Proc],
) -> None:
    out = load(broken_outcomes["resourcelist-without-items"].stdout)
    assert out["kind"] == "ResourceList"
    assert out["results"] == [
        {
            "message": "<stdin>: ResourceList has no 'items' (required by the KRM spec)",
            "severity": "error",
        }
    ]


# --- wrong types at every level of a WorkloadRun -----------------------------------------------
# (name of the run, how to break it, field path, what the message says)
WRONG_TYPES: list[tuple[str, dict[str, Any], str, str]] = [
    ("num-nodes-str", {"numNodes": "4"}, "spec.numNodes", "valid integer; got str '4'"),
    ("num-nodes-bool", {"numNodes": True}, "spec.numNodes", "valid integer; got bool True"),
    ("num-nodes-float", {"numNodes": 2.0}, "spec.numNodes", "valid integer; got float 2.0"),
    ("num-nodes-zero", {"numNodes": 0}, "spec.numNodes", "greater than or equal to 1"),
    ("framework-list", {"framework": ["mpi"]}, "spec.framework", "got list ['mpi']"),
    ("framework-empty", {"framework": {}}, "spec.framework", "exactly one of mpi, torch, exec"),
    ("image-list", {"image": ["a"]}, "spec.image", "valid string; got list"),
    ("image-empty", {"image": ""}, "spec.image", "at least 1 character"),
    ("gpus-per-node-str", {"gpusPerNode": "8"}, "spec.gpusPerNode", "valid integer; got str"),
    ("env-str", {"env": "A=1"}, "spec.env", "valid list; got str 'A=1'"),
    ("env-item-str", {"env": ["A=1"]}, "spec.env[0]", "got str 'A=1'"),
    ("env-value-int", {"env": [{"name": "A", "value": 1}]}, "spec.env[0].value", "got int 1"),
    ("env-name-missing", {"env": [{"value": "1"}]}, "spec.env[0].name", "required field"),
    ("volumes-mapping", {"volumes": {"a": 1}}, "spec.volumes", "valid list; got dict"),
    (
        "target-node-selector-list",
        {"target": {"nodeSelector": ["a"]}},
        "spec.target.nodeSelector",
        "valid dictionary",
    ),
    (
        "target-node-selector-int-value",
        {"target": {"nodeSelector": {"rack": 1}}},
        "spec.target.nodeSelector.rack",
        "valid string; got int 1",
    ),
    (
        "match-expression-unknown-operator",
        {"target": {"matchExpressions": [{"key": "a", "operator": "Like", "values": ["b"]}]}},
        "spec.target.matchExpressions[0].operator",
        "value 'Like' is not allowed",
    ),
    (
        "orchestration-str",
        {"orchestration": "fast"},
        "spec.orchestration",
        "valid dictionary or instance of Orchestration; got str 'fast'",
    ),
    (
        "repeat-count-str",
        {"orchestration": {"repeatCount": "2"}},
        "spec.orchestration.repeatCount",
        "valid integer; got str '2'",
    ),
    (
        "max-concurrent-negative",
        {"orchestration": {"maxConcurrent": -1}},
        "spec.orchestration.maxConcurrent",
        "greater than or equal to 0",
    ),
    (
        "timeout-int",
        {"orchestration": {"timeoutPerJob": 60}},
        "spec.orchestration.timeoutPerJob",
        "valid string; got int 60",
    ),
    (
        "placement-unknown",
        {"orchestration": {"placement": "Anywhere"}},
        "spec.orchestration.placement",
        "value 'Anywhere' is not allowed",
    ),
    (
        "config-inline-list",
        {"config": {"inline": ["a.sh"]}},
        "spec.config.inline",
        "valid dictionary",
    ),
    (
        "gang-scheduler-name-int",
        {"gangScheduler": {"schedulerName": 7}},
        "spec.gangScheduler.schedulerName",
        "valid string; got int 7",
    ),
    (
        "override-pre-command-str",
        {"overrides": [{"when": {}, "preCommand": "echo hi"}]},
        "spec.overrides[0].preCommand",
        "valid list; got str 'echo hi'",
    ),
    (
        "workload-labels-list",
        {"workloadMetadata": {"labels": ["a=b"]}},
        "spec.workloadMetadata.labels",
        "valid dictionary",
    ),
    ("unknown-field-in-spec", {"numNode": 2}, "spec.numNode", "did you mean 'numNodes'?"),
]
MPI_WRONG_TYPES: list[tuple[str, dict[str, Any], str, str]] = [
    ("mpi-args-str", {"args": "-b 8"}, "spec.framework.mpi.args", "valid list; got str '-b 8'"),
    ("mpi-args-item-int", {"args": [8]}, "spec.framework.mpi.args[0]", "valid string; got int 8"),
    ("mpi-mpiargs-dict", {"mpiArgs": {"x": 1}}, "spec.framework.mpi.mpiArgs", "valid list"),
    ("mpi-binary-missing", {"binary": None}, "spec.framework.mpi.binary", "valid string"),
]
META_WRONG_TYPES: list[tuple[str, dict[str, Any], str, str]] = [
    ("labels-int-value", {"labels": {"a": 1}}, "metadata.labels.a", "valid string; got int 1"),
    ("namespace-int", {"namespace": 5}, "metadata.namespace", "valid string; got int 5"),
]


def _wrong_type_runs() -> list[dict[str, Any]]:
    runs = []
    for name, patch, _, _ in WRONG_TYPES:
        run = mpi_run(name)
        run["spec"].update(patch)
        runs.append(run)
    for name, patch, _, _ in MPI_WRONG_TYPES:
        run = mpi_run(name)
        run["spec"]["framework"]["mpi"].update(patch)
        runs.append(run)
    for name, patch, _, _ in META_WRONG_TYPES:
        run = mpi_run(name)
        run["metadata"].update(patch)
        runs.append(run)
    spec_str = mpi_run("spec-str")
    spec_str["spec"] = "numNodes: 4"
    runs.append(spec_str)
    wrong_api = mpi_run("api-version-v1")
    wrong_api["apiVersion"] = "nvcre.nvidia.com/v1"
    runs.append(wrong_api)
    return runs


ALL_WRONG = [
    *WRONG_TYPES,
    *MPI_WRONG_TYPES,
    *META_WRONG_TYPES,
    ("spec-str", {}, "spec", "valid dictionary or instance of WorkloadRunSpec; got str"),
    ("api-version-v1", {}, "apiVersion", "expected 'nvcre.nvidia.com/v1alpha1'"),
]
WRONG_INPUT = dump(rl([*_wrong_type_runs(), *nodes(2)]))


@pytest.fixture(scope="module")
def wrong_types_outcome() -> Proc:
    return run_fn(WRONG_INPUT)


def test_every_wrong_type_is_refused_at_once_and_nothing_rendered(
    wrong_types_outcome: Proc,
) -> None:
    assert_clean_refusal(wrong_types_outcome, WRONG_INPUT)
    assert f"workloadrun-fn: {len(ALL_WRONG)} error(s); nothing rendered" in (
        wrong_types_outcome.stderr
    )


@pytest.mark.parametrize(
    ("run", "path", "message"),
    [(name, path, msg) for name, _, path, msg in ALL_WRONG],
    ids=[name for name, *_ in ALL_WRONG],
)
def test_wrong_type_names_run_field_path_and_file(
    run: str, path: str, message: str, wrong_types_outcome: Proc
) -> None:
    ref = "5/namespace-int" if run == "namespace-int" else run
    lines = [
        line for line in wrong_types_outcome.stderr.splitlines() if f"WorkloadRun {ref}:" in line
    ]
    assert len(lines) == 1, wrong_types_outcome.stderr
    assert f"WorkloadRun {ref}: {path}: " in lines[0]
    assert message in lines[0]
    assert lines[0].endswith("(workloadrun.yaml#0)")
    results = load(wrong_types_outcome.stdout)["results"]
    (result,) = [r for r in results if r.get("resourceRef", {}).get("name") == run]
    assert result["field"] == {"path": path}
    assert result["file"] == {"path": "workloadrun.yaml", "index": 0}
    assert result["severity"] == "error"


# --- kinds ---------------------------------------------------------------------------------------


def test_unknown_kinds_of_other_groups_pass_through_untouched() -> None:
    service = {
        "apiVersion": "example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": "g", "annotations": {"x": "y"}},
        "spec": {"anything": [1, {"nested": None}]},
    }
    data = dump(rl([service]))
    proc = run_fn(data)
    assert proc.returncode == 0, proc.stderr
    assert output_items(proc.stdout) == [service]


@pytest.mark.parametrize(
    "kind",
    ["WorkloadRunn", "Workloadrun", "WorkloadRuns"],
    ids=lambda k: f"misspelt-kind-{k}-in-the-nvcre-group-refused",
)
def test_misspelt_kind_in_the_nvcre_group_is_refused(kind: str) -> None:
    run_ = mpi_run()
    run_["kind"] = kind
    data = dump(rl([run_, *nodes(2)]))
    assert_clean_refusal(run_fn(data), data, f"unknown kind {kind!r}", "nvcre.nvidia.com")


# --- Nodes without labels or providerID ---------------------------------------------------------


def _bare_node(name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, **fields}


NODE_CASES: dict[str, tuple[list[dict[str, Any]], tuple[str, ...]]] = {
    "nodes-without-labels-match-no-target": (
        [_bare_node("n1"), _bare_node("n2")],
        (
            "WorkloadRun x: no eligible nodes",
            "(default target: label nvidia.com/gpu.present=true); 2 Node(s) in the input",
        ),
    ),
    "nodes-with-null-labels-spec-status": (
        [_bare_node("n1", spec=None, status=None) | {"metadata": {"name": "n1", "labels": None}}],
        ("WorkloadRun x: no eligible nodes", "1 Node(s) in the input"),
    ),
    "no-nodes-at-all-says-how-to-pass-them": (
        [],
        (
            "WorkloadRun x: no eligible nodes: the input holds no Node. Pass the inventory",
            "kubectl get nodes -o yaml | workloadrun-fn render workloadrun.yaml -",
            "--platform NAME and/or --gpu-arch NAME",
        ),
    ),
    "too-few-nodes-gives-both-numbers": (
        [node("gpu-node-01")],
        ("spec.numNodes: not enough eligible nodes: need 2 (numNodes), found 1",),
    ),
}


NODE_INPUTS = {case: dump(rl([mpi_run(), *inv])) for case, (inv, _) in NODE_CASES.items()}


@pytest.fixture(scope="module")
def node_outcomes() -> dict[str, Proc]:
    return run_all(NODE_INPUTS)


@pytest.mark.parametrize("case", list(NODE_CASES))
def test_node_inventory_problems_are_refused_clearly(
    case: str, node_outcomes: dict[str, Proc]
) -> None:
    fragments = NODE_CASES[case][1]
    assert_clean_refusal(node_outcomes[case], NODE_INPUTS[case], *fragments, "(workloadrun.yaml#0)")


def test_an_empty_target_is_the_default_target_in_the_error_too() -> None:
    """``target: {}`` selects as no target does (nvidia.com/gpu.present=true): say so."""
    data = dump(rl([mpi_run(target={}), _bare_node("n1"), _bare_node("n2")]))
    assert_clean_refusal(
        run_fn(data),
        data,
        "(default target: label nvidia.com/gpu.present=true); 2 Node(s) in the input",
    )


def test_nodes_without_provider_id_are_a_valid_hand_written_inventory() -> None:
    data = dump(rl([mpi_run(), *nodes(2, provider="")]))
    proc = run_fn(data)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    kinds = [o["kind"] for o in output_items(proc.stdout)]
    assert kinds.count("TrainJob") == 1


# --- tracebacks ----------------------------------------------------------------------------------

BOOM = (
    "import sys, krm_fn.entry.run as r\n"
    "def boom(*a, **k): raise RuntimeError('injected failure')\n"
    "r.run_krm = boom\n"
    "from krm_fn.entry.cli import main\n"
    "sys.argv = ['workloadrun-fn', *sys.argv[1:]]\n"
    "main()\n"
)


@pytest.mark.parametrize(
    ("args", "traceback_shown"),
    [([], False), (["--debug"], True)],
    ids=["internal-error-hides-traceback", "debug-flag-shows-traceback"],
)
def test_internal_error_is_exit_70_and_traceback_only_with_debug(
    args: list[str], traceback_shown: bool
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BOOM, *args],
        input=b"kind: Anything\n",  # not empty: an empty stdin stops before run_krm
        capture_output=True,
        timeout=30,
    )
    err = proc.stderr.decode()
    if traceback_shown:
        assert "Traceback" in err and "injected failure" in err
    else:
        assert proc.returncode == 70
        assert "Traceback" not in err
        assert "workloadrun-fn: internal error: RuntimeError: injected failure" in err
        assert "rerun with --debug" in err


def test_preview_with_a_list_as_config_is_refused(tmp_path: Path) -> None:
    (tmp_path / "in.yaml").write_bytes(dump(mpi_run()))
    (tmp_path / "cfg.yaml").write_text("- 1\n")
    proc = run_fn(b"", "render", str(tmp_path / "in.yaml"), "--config", str(tmp_path / "cfg.yaml"))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "cfg.yaml" in proc.stderr
    assert proc.stdout == ""


USAGE_ERRORS = {
    "render-without-files-is-a-usage-error": ["render"],
    "unknown-option-is-a-usage-error": ["--bogus"],
    "unknown-output-format-is-a-usage-error": ["render", "-o", "xml", "x.yaml"],
}


@pytest.mark.parametrize("case", list(USAGE_ERRORS))
def test_usage_errors_exit_2_with_click_usage_text(case: str) -> None:
    proc = run_fn(b"", *USAGE_ERRORS[case])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("Usage: workloadrun-fn")
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
