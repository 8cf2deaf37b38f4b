"""Regressions: each test here was a bug this suite found (the comment names the module at
fault and what was observed); all are fixed, and the tests keep them fixed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krm_fn.io import limits
from tests.e2e.helpers import need, run
from tests.robustness import bombs
from tests.robustness.fuzzing import FUZZ, check_run_krm, mutated_inputs
from tests.robustness.helpers import (
    Proc,
    assert_clean_refusal,
    assert_stdout_is_echo_or_empty,
    dump,
    mpi_run,
    node,
    nodes,
    rl,
    run_all,
    run_fn,
)
from tests.robustness.test_all_or_nothing import _package, user_file_diffs

TIME_LIMIT_S = 10.0
"""CPU seconds a refusal may take (load-independent, see ``Proc.cpu_seconds``)."""
KILL_AFTER_S = 6 * TIME_LIMIT_S
MEMORY_LIMIT = 1024**3
RL_HEAD = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"


def _refused_in_bounds(proc: Proc, data: bytes, *fragments: str) -> None:
    assert not proc.timed_out, f"still running after {KILL_AFTER_S}s"
    assert proc.cpu_seconds < TIME_LIMIT_S, f"{proc.cpu_seconds:.1f} s of CPU"
    assert proc.max_rss_bytes < MEMORY_LIMIT, f"{proc.max_rss_bytes / 2**20:.0f} MiB"
    assert_clean_refusal(proc, data, *fragments)


# --- 1. krm_fn.entry.run._failed / resourcelist: a refused ResourceList loses its items --------------


def test_refused_resourcelist_with_a_bad_item_still_returns_every_input_item() -> None:
    data = (RL_HEAD + "- 3\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n").encode()
    proc = run_fn(data)
    assert_clean_refusal(proc, data, "<stdin> items[0]: document is a int")
    # observed: items: [] (the ConfigMap is dropped from the answer)
    assert_stdout_is_echo_or_empty(data, proc.stdout)


# --- 2. resourcelist.FunctionInput.load / run._render: lazily read item escapes the try -------


@pytest.mark.parametrize(
    "item",
    [
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n  data:\n    a: 'open\n",
        '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n  data: {a: "b\n',
    ],
    ids=["unterminated-single-quote-in-item", "unterminated-flow-mapping-in-item"],
)
def test_malformed_item_of_a_resourcelist_is_a_clean_refusal_with_the_input_line(
    item: str,
) -> None:
    data = (RL_HEAD + item).encode()
    proc = run_fn(data)
    # observed: exit 70 "internal error: YAMLInputError: ... (line 7, column 1)", the line
    # counted inside the item, not in the input
    assert_clean_refusal(proc, data, "<stdin>: malformed YAML")
    assert "line 9" in proc.stderr or "line 10" in proc.stderr


# --- 3. inventory.node_info: a Node whose sections are not mappings crashes -----------------


BROKEN_NODES = {
    "node-spec-is-a-string": {"metadata": {"name": "n1"}, "spec": "x"},
    "node-status-is-a-string": {"metadata": {"name": "n1"}, "status": "x"},
    "node-status-is-a-list": {"metadata": {"name": "n1"}, "status": ["Ready"]},
    "node-allocatable-is-a-string": {"metadata": {"name": "n1"}, "status": {"allocatable": "8"}},
    "node-conditions-is-an-int": {"metadata": {"name": "n1"}, "status": {"conditions": 1}},
    "node-taints-is-an-int": {"metadata": {"name": "n1"}, "spec": {"taints": 3}},
    "node-metadata-is-null": {"metadata": None},
}


@pytest.mark.parametrize("case", list(BROKEN_NODES))
def test_node_with_malformed_sections_is_refused_naming_node_and_field(case: str) -> None:
    bad = {"apiVersion": "v1", "kind": "Node", **BROKEN_NODES[case]}
    for data in (dump(rl([mpi_run(numNodes=1), *nodes(1), bad])), dump(rl([bad]))):
        proc = run_fn(data)
        # observed: exit 70, "internal error: AttributeError/TypeError ..." (node_info,
        # or output.mark_local_config for metadata: null)
        assert_clean_refusal(proc, data, "Node")
        assert "items[" in proc.stderr  # which document


def test_node_list_with_malformed_items_is_refused() -> None:
    bad_list = {"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node", "metadata": "x"}]}
    data = dump(rl([mpi_run(numNodes=1), *nodes(1), bad_list]))
    assert_clean_refusal(run_fn(data), data, "items[")


# --- 4. inputs.file_ref_of: WorkloadRun annotations that are not a mapping crash -------------


@pytest.mark.parametrize("annotations", [["a"], "a=b", True], ids=["list", "string", "bool"])
def test_workloadrun_annotations_not_a_mapping_is_refused(annotations: Any) -> None:
    run_ = mpi_run()
    run_["metadata"]["annotations"] = annotations
    data = dump(rl([run_, *nodes(2)]))
    # observed: exit 70, "AttributeError: ... has no attribute 'get'" in inputs.file_ref_of
    assert_clean_refusal(run_fn(data), data, "WorkloadRun x: metadata.annotations")


# --- 5. yamlio.load_all: no bound on aliases, expanded depth or size (see krm_fn.io.limits) -----


BOMBS = {
    "billion-laughs-refused-quickly": (bombs.billion_laughs().encode(), "aliases expand"),
    "oversized-input-refused-quickly": (bombs.oversized(), "MiB limit"),
    "too-many-nodes-refused-quickly": (bombs.many_nodes(limits.MAX_NODES).encode(), "YAML nodes"),
}


@pytest.fixture(scope="module")
def bomb_runs() -> dict[str, Proc]:
    return run_all({k: data for k, (data, _) in BOMBS.items()}, timeout=KILL_AFTER_S)


@pytest.mark.parametrize("case", list(BOMBS))
def test_yaml_bombs_are_refused_within_bounded_time_and_memory(
    case: str, bomb_runs: dict[str, Proc]
) -> None:
    # observed: billion laughs runs past the timeout (2.5 GiB after 10 s, expanding 3.5e9
    # strings); the 64 MiB + 1 input is accepted and rendered (1.3 s, 336 MiB); the 1M-node
    # input is accepted after ~10 s and ~900 MiB.
    data, fragment = BOMBS[case]
    _refused_in_bounds(bomb_runs[case], data, fragment)


# --- 6. inventory / collect_nodes: a Node without a name is silently ignored ---------------


def test_nameless_node_is_reported() -> None:
    nameless = {"apiVersion": "v1", "kind": "Node", "metadata": {"labels": {"x": "y"}}}
    data = dump(rl([mpi_run(numNodes=1), *nodes(1), nameless]))
    proc = run_fn(data)
    # observed: exit 0, the Node is silently ignored
    assert "items[2]" in proc.stderr and "metadata.name" in proc.stderr


# --- 7. yamlio._describe: a reader error is two lines and names "<unicode string>" ---------


def test_control_character_error_is_one_line_naming_the_input() -> None:
    data = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \x01}\n"
    proc = run_fn(data)
    assert_clean_refusal(proc, data, "<stdin>: ")
    lines = proc.stderr.splitlines()
    # observed: '... control characters are not allowed' / '  in "<unicode string>", position 48'
    assert len(lines) == 2, lines
    assert "<unicode string>" not in proc.stderr
    assert "line 3" in lines[0]


# --- 8. fastio item edit (ruamel path): user text rewritten, a comment moved to another file --

STYLED_RUN = """\
# hand-written, in every style YAML allows
apiVersion: "nvcre.nvidia.com/v1alpha1"
kind: WorkloadRun
metadata: {name: styled-run, labels: {team: "a"}}   # flow mapping
spec:
  image: 'nvcr.io/nvidia/pytorch:26.01-py3'
  framework:
    mpi:
      mpirunPath: /usr/local/mpi/bin/mpirun
      binary: "/usr/local/bin/all_reduce_perf_mpi"
      args: ["-b", "8",   "-e", '32G']
  numNodes: 2   # two nodes per group
  env:
    - {name: "A", value: "x y"}
    - name: B
      value: >-
        folded
        text
"""


@pytest.mark.e2e
def test_kpt_render_keeps_a_hand_styled_file_and_its_neighbours_intact(tmp_path: Path) -> None:
    """Against kpt's own reformatting: kpt (kyaml) rewrites a file it round-trips even with a
    function that changes nothing (comment spacing, flow spacing, folded scalars), so the
    baseline is the package rendered by an identity function (``cat``); ours may differ from
    it only by the local-config annotation, and no comment may move to another file."""
    kpt = need("kpt")
    pkg = _package(tmp_path / "ours")
    (pkg / "styled.yaml").write_text(STYLED_RUN)
    base = _package(tmp_path / "identity")
    (base / "styled.yaml").write_text(STYLED_RUN)
    kptfile = base / "Kptfile"
    kptfile.write_text(
        "\n".join(
            line
            for line in kptfile.read_text()
            .replace("exec: workloadrun-fn", "exec: cat")
            .splitlines()
            if "configPath" not in line
        )
        + "\n"
    )
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert proc.returncode == 0, proc.stderr
    ident = run([kpt, "fn", "render", "--allow-exec", str(base)])
    assert ident.returncode == 0, ident.stderr
    expected = {p.name: p.read_text() for p in sorted(base.iterdir()) if p.is_file()}
    expected.pop("Kptfile")
    assert user_file_diffs(expected, pkg) == {}
    assert "hand-written" not in (pkg / "second.yaml").read_text()


def test_head_comment_of_an_item_stays_with_its_item() -> None:
    data = (
        RL_HEAD
        + "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: first\n"
        + "- # belongs to the Node\n  apiVersion: v1\n  kind: Node\n"
        + '  metadata: {name: n1, labels: {"nvidia.com/gpu.present": "true"}}\n'
    ).encode()
    proc = run_fn(data)
    assert proc.returncode == 0, proc.stderr
    after_first = proc.stdout.split("name: first\n", 1)[1]
    # observed: "  # belongs to the Node" is written before "- apiVersion: v1" of the Node,
    # i.e. inside the ConfigMap item
    assert after_first.lstrip().startswith("- # belongs to the Node"), after_first[:200]


# --- 9. fuzzers that find the crashes above (derandomized: same examples every run) ---------


@pytest.mark.slow
@FUZZ
@given(mutated_inputs())
def test_fuzz_run_krm_on_mutated_golden_inputs(data: bytes) -> None:
    check_run_krm(data)


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 9) | st.sampled_from(["", "x", "True", "8"]),
    lambda kids: (
        st.lists(kids, max_size=3)
        | st.dictionaries(st.sampled_from(["type", "status", "key", "effect", "name"]), kids)
    ),
    max_leaves=10,
)


@pytest.mark.slow
@FUZZ
@given(
    st.sampled_from(["metadata", "spec", "status"]),
    st.sampled_from(
        [None, "labels", "taints", "conditions", "allocatable", "unschedulable", "providerID"]
    ),
    _values,
)
def test_fuzz_node_fields_never_crash(section: str, key: str | None, value: object) -> None:
    bad = copy.deepcopy(node("gpu-node-09"))
    if key is None:
        bad[section] = value
    else:
        bad[section] = {**(bad.get(section) or {}), key: value}
    check_run_krm(dump(rl([mpi_run(numNodes=1), *nodes(1), bad])))


@pytest.mark.slow
@FUZZ
@given(st.sampled_from(["labels", "annotations", "namespace", "name", "uid"]), _values)
def test_fuzz_workloadrun_metadata_never_crashes(key: str, value: object) -> None:
    run_ = mpi_run()
    run_["metadata"][key] = value
    check_run_krm(dump(rl([run_, *nodes(2)])))


@pytest.mark.parametrize(
    ("kind", "name", "metadata", "fragment"),
    [
        # api/crdshape.py checked only metadata's key names: a map as an annotation value of a
        # TrainJob reached apply_order's sync-options cache (exit 70, "unhashable type: dict").
        pytest.param(
            "TrainJob",
            "x-group-0",
            {"annotations": {"argocd.argoproj.io/sync-options": {"a": 1}}},
            "metadata.annotations.argocd.argoproj.io/sync-options: must be a string (quote it), "
            "got dict",
            id="trainjob-annotation-map-was-exit-70",
        ),
        # ... and a number as a label value went out with exit 0 (the API server refuses it).
        pytest.param(
            "TrainingRuntime",
            "x-runtime",
            {"labels": {"team": 5}},
            "metadata.labels.team: must be a string (quote it), got int",
            id="runtime-label-number-was-written",
        ),
        pytest.param(
            "TrainingRuntime",
            "x-runtime",
            {"annotations": ["a"]},
            "metadata.annotations: must be a map of strings, got list",
            id="annotations-as-a-list",
        ),
    ],
)
def test_a_dependency_with_metadata_values_the_api_server_refuses_is_refused(
    kind: str, name: str, metadata: dict[str, Any], fragment: str
) -> None:
    dep = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind,
           "metadata": {"name": name, **metadata}}  # fmt: skip
    run = mpi_run("x", overrides=[{"when": {}, "dependencies": [dep]}])
    stdin = dump(rl([run, *nodes(2)]))
    assert_clean_refusal(run_fn(stdin), stdin, fragment)
