"""One reader for every input form (issue 17): streams, v1 Lists, JSON, render files.

* Plain streams (function stdin, the kustomize legacy plugin) and ``v1 List`` documents
  (``kubectl get nodes -o yaml``) are read on the fast path and give what the full PyYAML
  path gives; so does the end-to-end output.
* A ``v1 List`` is cut into units shared with the helper process: forked or not, the
  same reading.
* JSON is read with ``json`` and answered in JSON; ``render`` files in every form give the
  same render.
* Fallbacks are visible (an info result for large inputs) and fast-reader bugs are not
  swallowed (issue 13).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from krm_fn.entry.run import run_krm
from krm_fn.fleet.inventory import collect_nodes, node_view
from krm_fn.io import fastio, limits, yamlio
from krm_fn.io import resourcelist as rl
from krm_fn.io.fastio import helper as fastio_helper
from krm_fn.io.fastio import reader as fastio_reader
from krm_fn.io.nodes import NODE_FIELDS, NodeField
from krm_fn.io.output import is_generated
from tests.builders import bench_generator, bench_inventory
from tests.builders import rl as resource_list
from tests.test_fastio_parity import (
    SETTINGS,
    go_item,
    nodes,
)

RUN_DOC = """\
# the run
apiVersion: nvcre.nvidia.com/v1alpha1
kind: WorkloadRun
metadata:
  name: pairs  # trailing comment
spec:
  image: nvcr.io/nvidia/pytorch:26.01-py3
  framework:
    mpi:
      mpirunPath: /usr/local/mpi/bin/mpirun
      binary: /usr/local/bin/all_reduce_perf_mpi
      args: ["-b", "8"]
  numNodes: 2
"""


def go_doc(obj: dict[str, Any]) -> str:
    """One document at column 0, kubectl style."""
    return go_item(obj)[2:].replace("\n  ", "\n")


def kubectl_list(ns: list[dict[str, Any]]) -> str:
    """``kubectl get nodes -o yaml``: a v1 List document, entries at column 0."""
    return (
        "apiVersion: v1\nitems:\n"
        + "".join(go_item(n) for n in ns)
        + 'kind: List\nmetadata:\n  resourceVersion: ""\n'
    )


def full_docs(text: str) -> list[Any]:
    return [d for d in yamlio.load_all(text) if d is not None]


def check_stream(text: str) -> fastio.FastList | None:
    """The fast reader reads ``text`` as a stream; same objects and Nodes as PyYAML."""
    fast = fastio.read(text)
    try:
        docs = full_docs(text)
    except yamlio.YAMLInputError:  # e.g. labels `on:` and `yes:`, both the key True
        assert isinstance(fast, fastio.Fallback)
        return None
    assert isinstance(fast, fastio.FastList), fast
    assert fast.stream
    assert len(fast.items) == len(docs)
    for it, obj in zip(fast.items, docs, strict=True):
        assert fast.load(it) == obj
        assert it.generated == is_generated(obj)
        if not it.generated:
            assert it.nodes == collect_nodes([obj])
        assert yaml.safe_load(rl.chunks_text(fast.document_pieces(it, False))) == obj
    return fast


def same_output(text: str) -> str:
    fast = run_krm(text.encode())
    full = run_krm(text.encode(), fast=False)
    assert (fast.exit_code, fast.stderr) == (full.exit_code, full.stderr)
    assert list(yaml.safe_load_all(fast.stdout)) == list(yaml.safe_load_all(full.stdout))
    return fast.stdout


@pytest.fixture
def gpu_nodes() -> list[dict[str, Any]]:
    return list(bench_generator().nodes(6, seed=3))


# --------------------------------------------------------------------------- streams


@SETTINGS
@given(st.lists(nodes(), min_size=1, max_size=4), st.booleans())
def test_a_plain_stream_reads_the_same_on_the_fast_path(
    ns: list[dict[str, Any]], leading_marker: bool
) -> None:
    text = ("---\n" if leading_marker else "") + "---\n".join([RUN_DOC, *(go_doc(n) for n in ns)])
    check_stream(text)


@SETTINGS
@given(st.lists(nodes(), min_size=1, max_size=4))
def test_a_kubectl_node_list_document_reads_the_same_on_the_fast_path(
    ns: list[dict[str, Any]],
) -> None:
    fast = check_stream(kubectl_list(ns))
    if fast is not None:
        (item,) = fast.items
        assert item.kind == "List"


def test_stream_output_is_the_full_readers_and_keeps_the_users_text(
    gpu_nodes: list[dict[str, Any]],
) -> None:
    for n in gpu_nodes:
        n["metadata"]["labels"]["nvidia.com/gpu.present"] = "true"
    text = "---\n".join([RUN_DOC, *(go_doc(n) for n in gpu_nodes)])
    fast = check_stream(text)
    assert fast is not None
    assert all(it.regular for it in fast.items if it.kind == "Node")
    out = same_output(text)
    assert "name: pairs  # trailing comment" in out  # the WorkloadRun's own text
    kinds = [d["kind"] for d in yaml.safe_load_all(out)]
    assert kinds[:7] == ["WorkloadRun"] + ["Node"] * 6 and "TrainJob" in kinds


def test_a_kubectl_list_in_a_stream_gives_the_same_output(gpu_nodes: list[dict[str, Any]]) -> None:
    for n in gpu_nodes:
        n["metadata"]["labels"]["nvidia.com/gpu.present"] = "true"
    same_output(RUN_DOC + "---\n" + kubectl_list(gpu_nodes))


@pytest.mark.parametrize(
    "text",
    [
        RUN_DOC + "--- !tagged\nkind: X\n",
        "%YAML 1.2\n---\n" + RUN_DOC,
        RUN_DOC + "...\n",
    ],
    ids=["content-on-a-marker-line", "directive", "document-end-marker"],
)
def test_stream_markers_the_fast_reader_does_not_handle_fall_back_with_a_reason(
    text: str,
) -> None:
    got = fastio.read(text)
    assert isinstance(got, fastio.Fallback)
    assert "'" in got.reason or "directive" in got.reason


# --------------------------------------------------------------------------- v1 List units


def _list_rl(ns: list[dict[str, Any]]) -> str:
    return bench_inventory(len(ns), 5, as_list=True)


def test_a_v1_list_item_is_cut_into_one_unit_per_node() -> None:
    text = _list_rl([{}] * 8)
    fast = fastio.read(text)
    assert isinstance(fast, fastio.FastList)
    from krm_fn.io.fastio.units import LIST_ENTRY, Units

    units = Units(fast, [i for i, it in enumerate(fast.items) if it.regular])
    assert units.kinds.count(LIST_ENTRY) == 8
    lst = next(it for it in fast.items if it.kind == "List")
    assert len(lst.nodes) == 8


@pytest.mark.parametrize("busy", [None, 0.2], ids=["parent-idle", "parent-busy"])
def test_the_helper_shares_a_v1_list_and_gives_the_same_reading(
    monkeypatch: pytest.MonkeyPatch, busy: float | None
) -> None:
    text = _list_rl([{}] * 40)
    inline = fastio.read(text)
    assert isinstance(inline, fastio.FastList)
    monkeypatch.setattr(fastio_helper, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(fastio_helper, "_cpus", lambda: 2)
    meanwhile = None if busy is None else (lambda: __import__("time").sleep(busy))
    forked = fastio.read(text, meanwhile=meanwhile)
    assert isinstance(forked, fastio.FastList)
    for a, b in zip(inline.items, forked.items, strict=True):
        assert (a.nodes, a.input_kind, a.regular, a.edit) == (
            b.nodes,
            b.input_kind,
            b.regular,
            b.edit,
        )
    assert sum(len(it.nodes) for it in forked.items) == 40


def test_a_helper_dying_on_a_v1_list_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _list_rl([{}] * 30)
    inline = fastio.read(text)
    assert isinstance(inline, fastio.FastList)
    monkeypatch.setattr(fastio_helper, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(fastio_helper, "_cpus", lambda: 2)

    def send(fd: int, payload: bytes) -> None:  # runs in the child
        raise OSError("helper failure")

    monkeypatch.setattr(fastio_helper, "_send", send)
    forked = fastio.read(text, meanwhile=lambda: None)
    assert isinstance(forked, fastio.FastList)
    assert [it.nodes for it in forked.items] == [it.nodes for it in inline.items]


def test_a_bad_node_entry_in_a_split_list_is_read_by_pyyaml() -> None:
    text = _list_rl([{}] * 4)
    # a flow mapping in one Node's labels: that entry is irregular, so the whole List is
    # read by PyYAML (as it would be unsplit) and still gives every Node
    at = text.index("      labels:\n", text.index("kind: Node"))
    bad = (
        text[:at] + "      labels: {a: b}\n      x-labels:\n" + text[at + len("      labels:\n") :]
    )
    fast = fastio.read(bad)
    assert isinstance(fast, fastio.FastList)
    lst = next(it for it in fast.items if it.kind == "List")
    assert not lst.regular
    assert len(lst.nodes) == 4


# --------------------------------------------------------------------------- JSON


def _json_rl(ns: list[dict[str, Any]]) -> str:
    run = yaml.safe_load(RUN_DOC)
    return json.dumps(resource_list([run, *ns]), indent=4)


def test_json_is_read_with_json_and_answered_in_json(gpu_nodes: list[dict[str, Any]]) -> None:
    for n in gpu_nodes:
        n["metadata"]["labels"]["nvidia.com/gpu.present"] = "true"
    text = _json_rl(gpu_nodes)
    inp = rl.parse_input(text)
    assert inp.encoding == "json" and inp.form == "resourcelist"
    assert inp.items == rl.parse_input(text, fast=False).items
    fast = run_krm(text.encode())
    full = run_krm(text.encode(), fast=False)
    assert fast.exit_code == full.exit_code == 0
    assert json.loads(fast.stdout) == yaml.safe_load(full.stdout)
    assert fast.stdout.startswith('{"apiVersion": "config.kubernetes.io/v1"')
    assert len(fast.stdout.splitlines()) > len(gpu_nodes)  # one item per line


def test_json_with_a_duplicate_key_is_refused_like_yaml() -> None:
    text = '{"apiVersion": "v1", "kind": "List", "kind": "List", "items": []}'
    with pytest.raises(yamlio.YAMLInputError, match="duplicate key 'kind'"):
        rl.parse_input(text)


def test_yaml_flow_style_that_is_not_json_is_read_as_yaml() -> None:
    inp = rl.parse_input("{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}")
    assert inp.encoding == "yaml"
    assert inp.items[0]["metadata"] == {"name": "a"}


def test_json_over_the_input_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _json_rl([])
    monkeypatch.setattr(limits, "MAX_INPUT_BYTES", len(text) - 1)
    with pytest.raises(yamlio.YAMLInputError, match="MiB limit"):
        rl.parse_input(text)


# --------------------------------------------------------------------------- render files


def test_render_reads_every_file_form_alike(
    tmp_path: Path, gpu_nodes: list[dict[str, Any]]
) -> None:
    from krm_fn.entry.preview import preview

    for n in gpu_nodes:
        n["metadata"]["labels"]["nvidia.com/gpu.present"] = "true"
    run = tmp_path / "run.yaml"
    run.write_text(RUN_DOC)
    forms = {
        "list.yaml": kubectl_list(gpu_nodes),
        "stream.yaml": "---\n".join(go_doc(n) for n in gpu_nodes),
        "list.json": json.dumps({"apiVersion": "v1", "kind": "List", "items": gpu_nodes}),
    }
    outs = set()
    for name, text in forms.items():
        (tmp_path / name).write_text(text)
        code, out, err = preview([str(run), str(tmp_path / name)], None, None, None, "yaml")
        assert code == 0, err
        outs.add(out)
    assert len(outs) == 1
    assert "kind: TrainJob" in outs.pop()


# --------------------------------------------------------------------------- fallbacks


def test_a_large_input_read_by_the_full_reader_says_why(gpu_nodes: list[dict[str, Any]]) -> None:
    pad = "x" * rl.FALLBACK_NOTE_BYTES
    cm = f'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pad\ndata:\n  big: "{pad}\t"\n'
    text = "---\n".join([RUN_DOC, cm, go_doc(gpu_nodes[0])])  # a tab: the full reader
    inp = rl.parse_input(text)
    assert inp.fast_list is None
    assert inp.notes == [
        "<stdin>: read with the full YAML reader (slower, more memory): the input has tabs, "
        "carriage returns or other control characters"
    ]


def test_a_small_input_read_by_the_full_reader_has_no_note() -> None:
    inp = rl.parse_input(RUN_DOC.replace("name: pairs", 'name: "pairs\t"'))
    assert inp.fast_list is None and inp.notes == []


def test_a_fallback_note_reaches_the_results(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rl, "FALLBACK_NOTE_BYTES", 0)
    text = (
        RUN_DOC.replace("# the run\n", "")
        .replace("--sizes", "")
        .replace("binary: /usr", 'note: "a\tb"\n      binary: /usr')
    )
    rl_text = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- "
        + text.replace("\n", "\n  ").rstrip()
        + "\n"
    )
    out = run_krm(rl_text.encode())
    results = yaml.safe_load(out.stdout)["results"]
    assert any("read with the full YAML reader" in r["message"] for r in results)


def test_a_bug_in_the_fast_reader_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("bug in the fast reader")

    monkeypatch.setattr(fastio_reader, "_header", broken)
    with pytest.raises(RuntimeError, match="bug in the fast reader"):
        rl.parse_input(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n"
        )


def test_yaml_keeps_its_own_non_printable_pattern() -> None:
    """No regex planted in re's private cache: yaml compiles its own pattern."""
    code = (
        "import krm_fn.io.yamlio, yaml\n"
        "print(yaml.reader.Reader.NON_PRINTABLE.pattern.startswith('[^'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_kubectl_list_file_is_read_in_place_when_not_written_back(
    gpu_nodes: list[dict[str, Any]],
) -> None:
    """render files: the List's entries are the items, without rewriting the text."""
    text = kubectl_list(gpu_nodes)
    inp = rl.parse_input(text, documents=False)
    assert inp.fast_list is not None and inp.fast_list.list_doc
    got = [n for e in inp.entries() for n in e.nodes]
    assert got == collect_nodes(full_docs(text))
    # a List holding something else than Nodes is rewritten and read as one document
    mixed = text.replace("kind: List\n", "kind: List\n").replace(
        "items:\n", "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n", 1
    )
    inp = rl.parse_input(mixed, documents=False)
    assert inp.fast_list is not None and not inp.fast_list.list_doc


# --------------------------------------------------------------------------- final answers


def test_nothing_above_the_reader_reads_again() -> None:
    """The reader's answer is final: entry/ neither waits for a check nor renders twice."""
    entry = Path(__file__).resolve().parents[1] / "krm_fn" / "entry"
    for path in sorted(entry.glob("*.py")):
        text = path.read_text()
        assert "StaleInput" not in text and ".confirm(" not in text, path.name
    assert not hasattr(fastio.FastList, "confirm")


_FIELD_VALUES = {
    "scalar": "x-1",
    "strings": {"a.example.com/k": "v"},
    "mapping": {"nvidia.com/gpu": "8", "cpu": "4"},
    "entries": [
        {"key": "k", "value": "v", "effect": "NoSchedule", "type": "Ready", "status": "True"}
    ],
}


@pytest.mark.parametrize("field", NODE_FIELDS, ids=lambda f: f"{f.section}.{f.key}")
def test_every_declared_node_field_is_read_alike_by_both_readers(field: NodeField) -> None:
    """The Node view is one declaration: each field in it is in both readers' views."""
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    obj.setdefault(field.section, {})[field.key] = _FIELD_VALUES[field.shape]
    if field.key == "name":
        obj["metadata"]["name"] = "x-1"
    fast = fastio.read(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + go_item(obj)
    )
    assert isinstance(fast, fastio.FastList) and fast.items[0].regular
    (node,) = fast.items[0].nodes
    assert node.raw == node_view(obj) and field.key in node.raw[field.section]
