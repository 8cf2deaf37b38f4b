"""The fast reader (krm_fn.io.fastio) and the full PyYAML path agree on every input.

* Property tests: random Nodes (labels that need quoting or not, providerIDs, taints,
  conditions with multi-line messages, allocatable, unschedulable, extra sections), written
  the way PyYAML, kubectl (go-yaml) and kpt write them, as single items or in a ``v1 List``:
  the fast reader accepts them and gives the same item dicts, NodeInfos (with their raw
  view), flags and end-to-end output as the full path.
* Fallback cases: shapes the fast reader does not handle (flow mappings, anchors, quoted
  keys, comments inside labels, CRLF, tabs, ``---`` inside block scalars, multi-line
  scalars reaching column 0, duplicate keys, non-string plain values, odd indentation, ...)
  are read by PyYAML (per item, or the whole input), never mis-read, never a crash.
* The emitter (krm_fn.io.fastdump) writes what PyYAML writes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krm_fn.entry.run import run_krm
from krm_fn.fleet.inventory import collect_nodes, node_info, node_view
from krm_fn.io import fastdump, fastio, yamlio
from krm_fn.io import resourcelist as rl
from krm_fn.io.fastio import helper as fastio_helper
from krm_fn.io.output import LABEL_MANAGED_BY as OUTPUT_LABEL_MANAGED_BY
from krm_fn.io.output import is_generated, is_input_kind, mark_local_config
from krm_fn.keys import LABEL_MANAGED_BY
from tests.builders import bench_inventory
from tests.test_yaml_classes import SPEC_NON_STRINGS

SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)


# --------------------------------------------------------------------------- writers


_RESOLVER = yaml.resolver.Resolver()


def _needs_quotes(text: str) -> bool:
    if text == "" or text != text.strip() or "\n" in text:
        return True
    if _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) != "tag:yaml.org,2002:str":
        return True
    return bool(re.search(r"^[-?:,\[\]{}#&*!|>'\"%@`=<~]|: | #|:$", text))


def _go_scalar(value: Any) -> str:
    """A scalar the way go-yaml (kubectl) writes it: double quotes when needed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if '"' in text or "\\" in text:
        return "'" + text.replace("'", "''") + "'"
    return '"' + text + '"' if _needs_quotes(text) else text


def _go_lines(obj: Any, ind: int) -> list[str]:
    pad = " " * ind
    out: list[str] = []
    for k, v in obj.items():
        if isinstance(v, dict) and v:
            out.append(f"{pad}{k}:")
            out += _go_lines(v, ind + 2)
        elif isinstance(v, list) and v:
            out.append(f"{pad}{k}:")
            for e in v:
                if isinstance(e, dict) and e:
                    sub = _go_lines(e, ind + 2)
                    out.append(pad + "- " + sub[0][ind + 2 :])
                    out += sub[1:]
                else:
                    out.append(f"{pad}- {_go_scalar(e)}")
        elif isinstance(v, dict):
            out.append(f"{pad}{k}: {{}}")
        elif isinstance(v, list):
            out.append(f"{pad}{k}: []")
        else:
            out.append(f"{pad}{k}: {_go_scalar(v)}")
    return out


def go_item(obj: dict[str, Any], ind: int = 0) -> str:
    """One sequence entry (``- `` at ``ind``), kubectl style."""
    lines = _go_lines(obj, ind + 2)
    return "\n".join([" " * ind + "- " + lines[0][ind + 2 :], *lines[1:]]) + "\n"


def py_item(obj: dict[str, Any], sort: bool = False) -> str:
    """One sequence entry at column 0, as ``yaml.safe_dump`` writes it (width 80)."""
    return yaml.safe_dump([obj], sort_keys=sort)


def resource_list(items_text: str, header: str = "") -> str:
    return f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n{header}items:\n{items_text}"


def as_list(nodes: list[dict[str, Any]]) -> str:
    subs = "".join(go_item(n, 2) for n in nodes)
    return f'- apiVersion: v1\n  kind: List\n  metadata:\n    resourceVersion: ""\n  items:\n{subs}'


# --------------------------------------------------------------------------- strategies

_name = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)
_label_key = st.one_of(
    st.sampled_from(
        [
            "kubernetes.io/hostname",
            "nvidia.com/gpu.present",
            "nvidia.com/gpu.product",
            "nvidia.com/gpu.count",
            "feature.node.kubernetes.io/cpu-cpuid.AVX512F",
            "topology.kubernetes.io/zone",
            "node.coreweave.cloud/type",
            "node-role.together.ai/worker",
            "on",
            "yes",
            "1",
        ]
    ),
    st.from_regex(r"[a-z][a-z0-9.-]{0,8}/[A-Za-z0-9][A-Za-z0-9_.-]{0,8}", fullmatch=True),
)
_label_value = st.one_of(
    st.sampled_from(
        [
            "true",
            "false",
            "8",
            "0",
            "1.5",
            "",
            "NVIDIA-H100-80GB-HBM3",
            "NVIDIA-GB200",
            "null",
            "~",
            "2024-01-01",
            "12:30",
            "0x1F",
            "it's",
            'say "hi"',
            "a: b",
            "a #b",
            "-x",
            "yes",
            "ON",
        ]
    ),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,12}", fullmatch=True),
)
_provider = st.sampled_from(
    [
        "aws:///us-east-1a/i-0123456789abcdef0",
        "gce://proj/us-central1-a/node-1",
        "azure:///subscriptions/x/resourceGroups/y/providers/Microsoft.Compute/virtualMachines/z",
        "ocid1.instance.oc1.iad.abc",
        "openstack:///5e1f",
        "kubevirt://ns/vm",
        "metal3://ns/name/uid",
        "",
    ]
)
_cond_type = st.sampled_from(["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"])
_status = st.sampled_from(["True", "False", "Unknown"])
_message = st.one_of(
    st.sampled_from(["kubelet is posting ready status", "x" * 150 + " y" * 20, "a: b"]),
    st.from_regex(r"[a-z ]{0,30}", fullmatch=True),
)


@st.composite
def nodes(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(_name)
    labels = draw(st.dictionaries(_label_key, _label_value, max_size=8))
    meta: dict[str, Any] = {"name": name}
    if draw(st.booleans()):
        meta["labels"] = labels
    if draw(st.booleans()):
        meta["annotations"] = {"node.alpha.kubernetes.io/ttl": "0", "csi/id": '{"a":"b"}'}
        if draw(st.booleans()):
            meta["annotations"]["config.kubernetes.io/local-config"] = draw(
                st.sampled_from(["true", "false", True])
            )
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": meta}
    spec: dict[str, Any] = {}
    pid = draw(_provider)
    if pid or draw(st.booleans()):
        spec["providerID"] = pid
    if draw(st.booleans()):
        spec["unschedulable"] = draw(st.sampled_from([True, False, "yes"]))
    if draw(st.booleans()):
        spec["taints"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"key": _label_key, "effect": st.sampled_from(["NoSchedule", "NoExecute"])},
                    optional={"value": _label_value},
                ),
                max_size=2,
            )
        )
    if spec or draw(st.booleans()):
        node["spec"] = spec
    status: dict[str, Any] = {}
    if draw(st.booleans()):
        status["allocatable"] = draw(
            st.dictionaries(
                st.sampled_from(["nvidia.com/gpu", "cpu", "nscale.com/rdmashare", "pods"]),
                st.one_of(st.sampled_from(["8", "4", "191450m", "x"]), st.integers(0, 16)),
                max_size=4,
            )
        )
    if draw(st.booleans()):
        status["conditions"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"type": _cond_type, "status": _status},
                    optional={"message": _message, "reason": st.just("KubeletReady")},
                ),
                max_size=4,
            )
        )
    if draw(st.booleans()):
        status["images"] = [{"names": ["nvcr.io/x@sha256:ab", "nvcr.io/x:1"], "sizeBytes": 12}]
    if draw(st.booleans()):
        status["nodeInfo"] = {"architecture": "amd64", "kubeletVersion": "v1.32.4"}
    if status or draw(st.booleans()):
        node["status"] = status
    if draw(st.booleans()):
        node["metadata"].setdefault("labels", {})[LABEL_MANAGED_BY] = draw(
            st.sampled_from(["workloadrun-fn", "someone-else"])
        )
    return node


WORKLOADRUN = """\
# head comment of the run
- apiVersion: nvcre.nvidia.com/v1alpha1
  kind: WorkloadRun
  metadata:
    name: pairs  # trailing comment
  spec:
    image: nvcr.io/nvidia/pytorch:26.01-py3
    framework:
      mpi:
        mpirunPath: /usr/local/mpi/bin/mpirun
        binary: /usr/local/bin/all_reduce_perf_mpi
        # sizes
        args: ["-b", "8"]
    numNodes: 2
"""


# --------------------------------------------------------------------------- checks


def full_items(text: str) -> list[dict[str, Any]]:
    return list(rl.parse_input(text, fast=False).items)


def check_parity(text: str, expect_fast: bool = False) -> fastio.FastList | None:
    """The fast reader gives what the full path gives (its answer is final)."""
    got = fastio.read(text)
    try:
        full = full_items(text)
    except (rl.InputError, yamlio.YAMLInputError):
        full = None
    if isinstance(got, fastio.Fallback):
        assert not expect_fast, f"the fast reader refused a regular input: {got.reason}"
        return None
    fast = got
    assert full is not None, "the fast reader accepted what PyYAML refuses"
    assert len(fast.items) == len(full)
    for it, obj in zip(fast.items, full, strict=True):
        assert fast.load(it) == obj
        assert it.generated == is_generated(obj)
        assert it.input_kind == is_input_kind(obj)
        if not it.generated:
            assert it.nodes == collect_nodes([obj])
        if it.input_kind:
            want = yaml.safe_load(yaml.safe_dump(obj))
            mark_local_config(want)
            assert yaml.safe_load(fast.marked_text(it)) == [want]
    if expect_fast:
        assert any(it.regular for it in fast.items), "nothing was read on the fast path"
    return fast


def check_end_to_end(text: str) -> None:
    """Same exit code, stderr and output objects; generated objects byte-identical."""
    fast_out = run_krm(text.encode())
    full_out = run_krm(text.encode(), fast=False)
    assert fast_out.exit_code == full_out.exit_code
    assert fast_out.stderr == full_out.stderr
    assert yaml.safe_load(fast_out.stdout) == yaml.safe_load(full_out.stdout)
    gen = fast_out.stdout.find("\n  labels:\n    app.kubernetes.io/managed-by: workloadrun-fn")
    if gen >= 0 and fast_out.exit_code == 0:
        start = fast_out.stdout.rfind("\n- ", 0, gen)
        assert fast_out.stdout[start:] in full_out.stdout


# --------------------------------------------------------------------------- properties


@pytest.mark.slow
@SETTINGS
@given(st.lists(nodes(), min_size=1, max_size=5), st.sampled_from(["go", "py", "py-sorted"]))
def test_nodes_as_items_read_the_same(ns: list[dict[str, Any]], style: str) -> None:
    if style == "go":
        body = "".join(go_item(n) for n in ns)
    else:
        body = "".join(py_item(n, sort=style == "py-sorted") for n in ns)
    check_parity(resource_list(WORKLOADRUN + body))


@pytest.mark.slow
@SETTINGS
@given(st.lists(nodes(), min_size=1, max_size=5))
def test_nodes_in_a_v1_list_read_the_same(ns: list[dict[str, Any]]) -> None:
    check_parity(resource_list(WORKLOADRUN + as_list(ns)))


@pytest.mark.slow
@SETTINGS
@given(st.lists(nodes(), min_size=2, max_size=4))
def test_end_to_end_output_is_the_same(ns: list[dict[str, Any]]) -> None:
    for n in ns:
        n["metadata"].setdefault("labels", {})["nvidia.com/gpu.present"] = "true"
        n["metadata"]["labels"].pop(LABEL_MANAGED_BY, None)
    check_end_to_end(resource_list(WORKLOADRUN + "".join(go_item(n) for n in ns)))


def test_realistic_inventory_is_read_on_the_fast_path() -> None:
    for as_list_item in (False, True):
        fast = check_parity(bench_inventory(40, 1, as_list=as_list_item), expect_fast=True)
        assert fast is not None
        nodes_read = [n for it in fast.items for n in it.nodes]
        assert len(nodes_read) == 40
        regular = [it for it in fast.items if it.kind in ("Node", "List")]
        assert all(it.regular for it in regular), "a generated Node left the fast path"


def _helper_case() -> str:
    return bench_inventory(60, 2, as_list=False)


def _assert_same_reading(inline: fastio.FastList, forked: fastio.FastList) -> None:
    for a, b in zip(inline.items, forked.items, strict=True):
        assert (a.nodes, a.generated, a.input_kind, a.regular) == (
            b.nodes,
            b.generated,
            b.input_kind,
            b.regular,
        )
        assert inline.marked_text(a) == forked.marked_text(b)


@pytest.mark.parametrize("busy", [None, 0.0, 0.3], ids=["no-meanwhile", "quick", "slow"])
def test_the_helper_process_gives_the_same_answer(
    monkeypatch: pytest.MonkeyPatch, busy: float | None
) -> None:
    """However the work is shared (the parent busy for long or not at all), same result."""
    text = _helper_case()
    inline = fastio.read(text)
    assert isinstance(inline, fastio.FastList)
    monkeypatch.setattr(fastio_helper, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(fastio_helper, "_cpus", lambda: 2)
    meanwhile = None if busy is None else (lambda: __import__("time").sleep(busy))
    forked = fastio.read(text, meanwhile=meanwhile)
    assert isinstance(forked, fastio.FastList)
    _assert_same_reading(inline, forked)


@pytest.mark.parametrize("failure", ["no-frame", "short-frame"])
def test_a_failing_helper_changes_nothing(monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    """The child dies before sending what it read, or half way: all done here."""
    text = _helper_case()
    inline = fastio.read(text)
    assert isinstance(inline, fastio.FastList)
    monkeypatch.setattr(fastio_helper, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(fastio_helper, "_cpus", lambda: 2)
    real_send = fastio_helper._send

    def send(fd: int, payload: bytes) -> None:  # runs in the child
        if failure == "short-frame":
            real_send(fd, payload[: len(payload) // 2])
        raise OSError("helper failure")

    monkeypatch.setattr(fastio_helper, "_send", send)
    forked = fastio.read(text, meanwhile=lambda: None)
    assert isinstance(forked, fastio.FastList)
    _assert_same_reading(inline, forked)


def test_node_view_is_what_both_paths_give() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n", "labels": {"a": "b"}, "annotations": {"x": "y"}},
        "spec": {"providerID": "aws:///z/i-1", "podCIDR": "10.0.0.0/24"},
        "status": {
            "allocatable": {"nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True", "message": "m"}],
            "images": [],
        },
    }
    view = node_view(obj)
    assert view == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n", "labels": {"a": "b"}},
        "spec": {"providerID": "aws:///z/i-1"},
        "status": {
            "allocatable": {"nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    assert node_info(obj).raw == view
    fast = check_parity(resource_list(go_item(obj)), expect_fast=True)
    assert fast is not None and fast.items[0].nodes[0].raw == view


def test_constants_agree() -> None:
    assert OUTPUT_LABEL_MANAGED_BY == LABEL_MANAGED_BY


# --------------------------------------------------------------------------- fallbacks

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "gpu-1", "labels": {"nvidia.com/gpu.present": "true", "k": "v"}},
    "spec": {"providerID": "aws:///z/i-1"},
    "status": {
        "allocatable": {"nvidia.com/gpu": "8"},
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}
PLAIN = go_item(NODE)
SECOND = PLAIN.replace("gpu-1", "gpu-2").replace("i-1", "i-2")

FALLBACKS: dict[str, str] = {
    "flow mapping labels": PLAIN.replace(
        '    labels:\n      nvidia.com/gpu.present: "true"\n      k: v\n',
        '    labels: {nvidia.com/gpu.present: "true", k: v}\n',
    ),
    "flow sequence": PLAIN.replace("  spec:\n", "  spec:\n    podCIDRs: [a, b]\n"),
    "anchor and alias": PLAIN.replace("      k: v\n", "      k: &v v\n      k2: *v\n"),
    "merge key": PLAIN.replace("      k: v\n", "      <<: {k: v}\n"),
    "quoted key": PLAIN.replace("      k: v\n", '      "k": v\n'),
    "single-quoted key at top": PLAIN.replace("  spec:\n", "  'spec':\n"),
    "comment inside labels": PLAIN.replace("      k: v\n", "      # note\n      k: v\n"),
    "trailing comment on name": PLAIN.replace("name: gpu-1", "name: gpu-1  # c"),
    "tag": PLAIN.replace("k: v", "k: !!str v"),
    "custom tag": PLAIN.replace("k: v", "k: !foo v"),
    "tabs": PLAIN.replace("k: v", "k:\tv"),
    "block scalar label": PLAIN.replace("      k: v\n", "      k: |\n        v\n"),
    "multi-line plain label": PLAIN.replace("      k: v\n", "      k: v\n        w\n"),
    "multi-line quoted reaching column 0": PLAIN.replace(
        "      k: v\n", '      k: "v\n- apiVersion: v1\n  kind: Fake"\n'
    ),
    "duplicate label": PLAIN.replace("      k: v\n", "      k: v\n      k: w\n"),
    "duplicate top key": PLAIN + "  spec:\n    providerID: other\n",
    "non-string label value": PLAIN.replace("k: v", "k: 8"),
    "bool label value": PLAIN.replace("k: v", "k: on"),
    "date label value": PLAIN.replace("k: v", "k: 2024-01-01"),
    "bool label key": PLAIN.replace("      k: v\n", "      on: v\n"),
    "odd indentation": PLAIN.replace("      k: v\n", "       k: v\n"),
    "wide sequence": PLAIN.replace(
        '    conditions:\n    - type: Ready\n      status: "True"\n',
        '    conditions:\n      - type: Ready\n        status: "True"\n',
    ),
    "null metadata": re.sub(r"  metadata:\n(?:    .*\n)+", "  metadata:\n", PLAIN),
    "escapes in double quotes": PLAIN.replace("k: v", 'k: "a\\tb"'),
    "status is a compact sequence": re.sub(
        r"  status:\n(?:    .*\n)+", "  status:\n  - Ready\n", PLAIN
    ),
    "status is a string": re.sub(r"  status:\n(?:    .*\n)+", "  status: x\n", PLAIN),
    "allocatable is a string": PLAIN.replace(
        '    allocatable:\n      nvidia.com/gpu: "8"\n', "    allocatable: '8'\n"
    ),
    "labels is a sequence": PLAIN.replace(
        '      nvidia.com/gpu.present: "true"\n      k: v\n', "    - a\n"
    ),
    "nameless node": PLAIN.replace("    name: gpu-1\n", ""),
    "document end marker": PLAIN + "...\n",
    "second document": PLAIN + "---\nfoo: bar\n",
}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_irregular_shapes_fall_back_and_read_the_same(case: str) -> None:
    body = FALLBACKS[case]
    assert body != PLAIN, "the case must change the regular item"
    text = resource_list(WORKLOADRUN + body + PLAIN.replace("gpu-1", "gpu-2"))
    fast = check_parity(text)
    if fast is not None:
        irregular = [it for it in fast.items if it.kind == "Node" and not it.regular]
        assert irregular, f"{case}: the irregular Node was read on the fast path"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("providerID: aws:///z/i-1", "providerID: 12"),
        ('nvidia.com/gpu: "8"', "nvidia.com/gpu: 8"),
        (
            "    providerID: aws:///z/i-1\n",
            "    providerID: aws:///z/i-1\n    unschedulable: True\n",
        ),
        ("    providerID: aws:///z/i-1\n", "    providerID: aws:///z/i-1\n    taints: []\n"),
        ("  metadata:\n", "  metadata:\n    annotations: {}\n"),
    ],
)
def test_plain_scalars_of_other_types_are_read_as_pyyaml_reads_them(old: str, new: str) -> None:
    body = PLAIN.replace(old, new)
    assert body != PLAIN
    fast = check_parity(resource_list(WORKLOADRUN + body), expect_fast=True)
    assert fast is not None and fast.items[1].regular


@pytest.mark.parametrize(
    "value", ["yes", "off", "08", "0o17", "1e3", "1_000", "1:20"], ids=lambda v: f"plain-{v}"
)
def test_a_plain_scalar_yaml_1_1_and_1_2_read_apart_is_not_echoed(value: str) -> None:
    # PyYAML (1.1) and ruamel.yaml / Go's yaml.v3 (1.2) read it as different values: the item
    # goes to PyYAML and is written from what it read (quoted), never echoed as it came
    body = PLAIN.replace("  metadata:\n", f"  metadata:\n    annotations:\n      a: {value}\n")
    text = resource_list(WORKLOADRUN + body + SECOND)
    fast = check_parity(text)
    assert fast is not None and not fast.items[1].regular
    done = run_krm(text.encode())
    assert done.exit_code == 0, done.stderr
    out = done.stdout
    assert f"a: {value}\n" not in out
    node = next(i for i in yaml.safe_load(out)["items"] if i["kind"] == "Node")
    from ruamel.yaml import YAML

    again = next(i for i in YAML(typ="safe").load(out)["items"] if i["kind"] == "Node")
    assert node["metadata"]["annotations"]["a"] == again["metadata"]["annotations"]["a"]


def test_crlf_input_goes_to_the_full_path() -> None:
    text = resource_list(WORKLOADRUN + PLAIN).replace("\n", "\r\n")
    assert isinstance(fastio.read(text), fastio.Fallback)
    assert full_items(text)


def test_block_scalar_with_document_markers_inside_is_passed_through() -> None:
    cm = (
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  data:\n"
        "    multi.yaml: |\n      a: 1\n      ---\n      b: 2\n      ...\n"
    )
    text = resource_list(WORKLOADRUN + cm + PLAIN)
    fast = check_parity(text)
    assert fast is not None
    assert [it.kind for it in fast.items] == ["WorkloadRun", "ConfigMap", "Node"]
    assert fast.item_text(fast.items[1]) == cm


def test_invalid_yaml_is_reported_like_the_full_path() -> None:
    bad = resource_list(WORKLOADRUN + PLAIN.replace("      k: v\n", "      k: 'v\n"))
    out = run_krm(bad.encode())
    assert out.exit_code == 1
    assert "malformed YAML" in "\n".join(out.stderr)


def test_comments_in_the_workloadrun_survive() -> None:
    text = resource_list(WORKLOADRUN + PLAIN + PLAIN.replace("gpu-1", "gpu-2"))
    out = run_krm(text.encode())
    assert out.exit_code == 0, out.stderr
    for comment in ("# head comment of the run", "# trailing comment", "# sizes"):
        assert comment in out.stdout
    assert 'args: ["-b", "8"]' in out.stdout
    run = yaml.safe_load(out.stdout)["items"][0]
    assert run["metadata"]["annotations"]["config.kubernetes.io/local-config"] == "true"


def test_running_on_its_own_output_changes_nothing() -> None:
    nodes_text = "".join(
        go_item({**NODE, "metadata": {**NODE["metadata"], "name": f"gpu-{i}"}}) for i in range(4)
    )
    first = run_krm(resource_list(WORKLOADRUN + nodes_text).encode())
    assert first.exit_code == 0, first.stderr
    again = run_krm(first.stdout.encode())
    assert again.exit_code == 0
    assert again.stdout == first.stdout


# --------------------------------------------------------------------------- the emitter

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            *["", "-", "-b", "true", "8", "1.5", "null", "~", "a: b", "a #b", " x", "x "],
            *["a\nb", "...", "---", "é", "0x1F", "2024-01-01", "12:30", "<<", "=", "a,b"],
            *["a:b", "a:", "x" * 127, "x" * 128, "x" * 129, "a@b", "'", '"', "*a", "&a"],
            *["!a", "%a", "|", ">"],
        ]
    ),
)
_keys = st.one_of(st.text(max_size=10), st.sampled_from(["a", "true", "1", "", "a b", "x" * 130]))
_objects = st.recursive(
    _scalars,
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(_keys, c, max_size=4)),
    max_leaves=25,
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(_objects)
def test_fastdump_writes_what_pyyaml_writes(obj: Any) -> None:
    assert fastdump.dump_item(obj) == yamlio.dump([obj])
    if isinstance(obj, dict):
        assert fastdump.dump(obj) == yamlio.dump(obj)
    assert fastdump.dump_all([obj, obj]) == yamlio.dump_all([obj, obj])


@pytest.mark.parametrize(
    "text",
    [
        "8",
        "4096",
        "0x1F",
        "0o17",
        "1_000",
        "1.5",
        "1e3",
        "12:30",
        "true",
        "No",
        "off",
        "null",
        "2024-01-01",
        "group-3",
        "a:b",
        "fleet-allreduce-group-4857",
        "nvidia.com/gpu",
    ],
    ids=lambda t: f"simple-string-{t}",
)
def test_a_simple_string_is_written_plain_or_single_quoted_as_pyyaml_writes_it(text: str) -> None:
    fastdump._VALUES.pop(text, None)
    fastdump._KEYS.pop(text, None)
    obj = {"metadata": {"labels": {text: text}}, "args": ["-n", text, text, text]}
    assert fastdump.dump(obj) == yamlio.dump(obj)
    assert yaml.safe_load(fastdump.dump(obj)) == obj


def _readers_agree(out: str) -> bool:
    from ruamel.yaml import YAML

    def value(doc: Any) -> Any:
        node = next(i for i in doc["items"] if i["kind"] == "Node")
        return node["metadata"]["annotations"]["a"]

    first, second = value(yaml.safe_load(out)), value(YAML(typ="safe").load(out))
    return bool(first == second) or repr(first) == repr(second)  # nan


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(sorted(SPEC_NON_STRINGS)).flatmap(
        lambda t: st.from_regex(f"(?:{SPEC_NON_STRINGS[t]})", fullmatch=True)
    )
)
def test_a_plain_scalar_either_spec_reads_as_another_type_comes_out_alike_to_both(
    value: str,
) -> None:
    # whatever the fast path writes, PyYAML (1.1) and ruamel.yaml (1.2) read the same value
    if not value.strip() or value[:1] in "=<" or "\t" in value or value.endswith(" "):
        return  # not a plain value the grammar takes (or an empty one)
    body = PLAIN.replace("  metadata:\n", f"  metadata:\n    annotations:\n      a: {value}\n")
    text = resource_list(WORKLOADRUN + body + SECOND)
    out, full = run_krm(text.encode()), run_krm(text.encode(), fast=False)
    assert out.exit_code == full.exit_code, (value, out.stderr, full.stderr)  # same answer
    assert out.exit_code == 1 or _readers_agree(out.stdout), value
