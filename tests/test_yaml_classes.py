"""Issue 24: each class of input the function once read or wrote unlike a YAML library.

One test per class, each holding the minimal inputs that failed before (exit 0 with output
no parser reads, output that means something else, a crash, or an answer that depended on
the reader). Every answer is compared with the full reader's (``fast=False``, PyYAML over the
whole input) and its output read with PyYAML (duplicate keys refused) and ruamel.yaml.
The real Go readers (kpt, kustomize) see classes 1, 3 and 8 in ``tests/e2e/test_go_readers.py``.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from krm_fn.entry.run import RunOutcome, run_krm
from krm_fn.io import fastdump, yamlio
from krm_fn.io.resourcelist import write_chunks

RL = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
RUN = """\
- apiVersion: nvcre.nvidia.com/v1alpha1
  kind: WorkloadRun
  metadata:
    name: pairs
{meta}  spec:
    image: nvcr.io/nvidia/pytorch:26.01-py3
{spec}    framework:
      mpi:
        mpirunPath: /usr/local/mpi/bin/mpirun
        binary: /usr/local/bin/all_reduce_perf_mpi
    numNodes: 1
"""
NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-{i}
    labels:
      nvidia.com/gpu.present: "true"
      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
  spec:
    providerID: aws:///z/i-{i}
  status:
    allocatable:
      nvidia.com/gpu: "8"
    conditions:
    - type: Ready
      status: "True"
"""
NODES = NODE.format(i=1) + NODE.format(i=2)
CM = "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  data:\n"


def run(meta: str = "", spec: str = "", rest: str = NODES) -> str:
    return RL + RUN.format(meta=meta, spec=spec) + rest


def parsed(out: RunOutcome) -> list[Any]:
    """The output's documents as PyYAML (duplicate keys refused) and ruamel.yaml read them."""
    docs = [d for d in yamlio.load_all(out.stdout) if d is not None]
    assert [d for d in YAML(typ="safe", pure=True).load_all(out.stdout) if d is not None] == docs
    assert not any(line == "..." for line in out.stdout.splitlines()), "a document-end marker"
    return docs


def same_as_full_reader(text: str) -> RunOutcome:
    """The function's answer, checked against the full reader's: the same in every way."""
    fast, full = run_krm(text.encode()), run_krm(text.encode(), fast=False)
    assert (fast.exit_code, fast.stderr) == (full.exit_code, full.stderr)
    assert parsed(fast) == parsed(full)
    return fast


def item(out: RunOutcome, kind: str, name: str) -> dict[str, Any]:
    items = parsed(out)[0]["items"]
    return next(i for i in items if i["kind"] == kind and i["metadata"]["name"] == name)


@pytest.mark.parametrize(
    "annotations",
    [
        "    annotations:\n        a: b\n",
        '    annotations:\n      "config.kubernetes.io/local-config": "false"\n',
        '    annotations:\n      config.kubernetes.io/local-config: "fa\n\n        lse"\n',
        '    annotations:\n      config.kubernetes.io/local-config: &v "false"\n      b: *v\n',
    ],
    ids=["indented-by-four", "quoted-key", "value-with-a-blank-line", "anchored-value"],
)
def test_class1_a_local_config_edit_goes_out_only_when_the_grammar_confirmed_its_text(
    annotations: str,
) -> None:
    out = same_as_full_reader(run(meta=annotations))
    assert out.exit_code == 0, out.stderr
    ann = item(out, "WorkloadRun", "pairs")["metadata"]["annotations"]
    assert ann["config.kubernetes.io/local-config"] == "true"


@pytest.mark.parametrize(
    "kind_line",
    [
        "kind: ResourceList  # comment",
        '"kind": ResourceList',
        "kind: !!str ResourceList",
        "kind: &k ResourceList",
        "kind:\n  ResourceList",
    ],
    ids=["trailing-comment", "quoted-key", "tag", "anchor", "value-on-the-next-line"],
)
def test_class2_a_resource_list_is_recognised_by_parsing(kind_line: str) -> None:
    text = run().replace("kind: ResourceList", kind_line, 1)
    out = same_as_full_reader(text)
    assert out.exit_code == 0, out.stderr
    (doc,) = parsed(out)
    assert doc["kind"] == "ResourceList"
    assert any(i["kind"] == "TrainJob" for i in doc["items"])


@pytest.mark.parametrize("lead", [" " * 100, "\n" * 70, "\ufeff"], ids=["spaces", "lines", "bom"])
def test_class2_json_after_whitespace_or_a_bom_is_answered_in_json(lead: str) -> None:
    rl = yamlio.load_all(run())[0]
    out = run_krm((lead + json.dumps(rl)).encode())
    assert out.exit_code == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["kind"] == "ResourceList"
    assert any(i["kind"] == "TrainJob" for i in doc["items"])


@pytest.mark.parametrize(
    "text",
    [
        run(spec="    config:\n      inline:\n        run.sh: |+\n          echo hi\n\n\n"),
        run(spec='    env:\n    - name: X\n      value: "x\\n\\n"\n'),
        # a tab makes the full reader read (and PyYAML write) the passed-through ConfigMap
        run(rest=NODES + CM + '    b: "\t"\n    a: |+\n      x\n\n'),
    ],
    ids=["config-inline", "env-value", "passed-through-configmap"],
)
def test_class3_no_document_end_marker_inside_the_output(text: str) -> None:
    out = same_as_full_reader(text)  # (ruamel.yaml dropped what followed the marker)
    assert out.exit_code == 0, out.stderr
    items = parsed(out)[0]["items"]
    assert {"WorkloadRun", "Node", "TrainJob", "TrainingRuntime"} <= {i["kind"] for i in items}
    assert any(s.endswith("\n\n") for s in _strings(items))


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


@pytest.mark.parametrize(
    ("annotations", "shape"),
    [("\n    - a\n", "list"), ("\n      - a\n", "list"), (" [a, b]\n", "list"), (" abc\n", "str")],
    ids=["compact-sequence", "indented-sequence", "flow-sequence", "a-string"],
)
def test_class4_annotations_that_are_no_mapping_are_refused(annotations: str, shape: str) -> None:
    node = NODE.format(i=2).replace(
        "    name: gpu-2\n", f"    name: gpu-2\n    annotations:{annotations}"
    )
    out = same_as_full_reader(run(rest=NODE.format(i=1) + node))
    assert out.exit_code == 1  # refused: replacing them with a mapping would lose them
    assert (
        f"items[2]: Node gpu-2: metadata.annotations must be a mapping of strings, not a {shape}"
        in "\n".join(out.stderr)
    )


def test_class5_a_keep_chomped_block_before_a_separator_and_a_blank_line_keeps_its_value() -> None:
    stream = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: |+\n    x\n\n"
        "---\n\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n"
    )
    out = same_as_full_reader(stream)
    assert parsed(out)[0]["data"] == {"a": "x\n\n"}


@pytest.mark.parametrize(
    "rest",
    [
        NODE.format(i=1)
        + NODE.format(i=2).replace('    - type: Ready\n      status: "True"\n', "    - Ready\n"),
        NODE.format(i=1)
        + NODE.format(i=2).replace('    - type: Ready\n      status: "True"\n', "    - ~\n"),
        NODE.format(i=1).replace("aws:///z/i-1", "&a aws:///z/i-1")
        + NODE.format(i=2).replace("aws:///z/i-2", "&a aws:///z/i-2"),
        NODE.format(i=1)
        + NODE.format(i=2).replace(
            "      nvidia.com/gpu.present",
            "      " + "k" * 1025 + ": v\n      nvidia.com/gpu.present",
        ),
    ],
    ids=["condition-string", "condition-null", "anchor-in-two-items", "key-over-1024"],
)
def test_class6_the_fast_and_full_readers_give_the_same_answer(rest: str) -> None:
    out = same_as_full_reader(run(rest=rest))
    assert out.exit_code == 1  # each of these inputs is refused, by both readers alike


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("    a: !!int x\n", "'x' cannot be read as !!int"),
        ("    a: 2024-02-30\n", "'2024-02-30' cannot be read as !!timestamp"),
        ("    a: !!bool x\n", "'x' cannot be read as !!bool"),
    ],
    ids=["int-tag", "date-that-does-not-exist", "bool-tag"],
)
def test_class7_a_value_its_tag_cannot_build_is_refused_with_its_line(
    value: str, message: str
) -> None:
    out = same_as_full_reader(run(rest=NODES + CM + value))
    assert out.exit_code == 1
    assert message in out.stderr[0] and "(line 50, column 8)" in out.stderr[0]


def test_class7_a_mapping_tag_on_a_sequence_is_refused_with_its_line() -> None:
    out = same_as_full_reader(run(rest=NODES + CM.replace("  data:\n", "  data: !!map\n  - a\n")))
    assert out.exit_code == 1
    assert "a sequence cannot be read as !!map (line 49, column 9)" in out.stderr[0]


YAML12_NON_STRINGS = ["08", "1e3", "0o17", "0b11", "1_000", "+1", ".5", "1.", "2024-1-2", "y"]
YAML12_NON_STRINGS += ["2024-01-02 10:20:30,5"]  # Go reads a comma before the fraction too


@pytest.mark.parametrize("value", YAML12_NON_STRINGS)
def test_class8_a_string_yaml_1_2_reads_as_another_type_is_quoted(value: str) -> None:
    out = same_as_full_reader(
        run(spec=f"    env:\n    - name: X\n      value: {json.dumps(value)}\n")
    )
    assert out.exit_code == 0, out.stderr
    assert f"value: '{value}'" in out.stdout
    assert fastdump.dump({"k": value}) == yamlio.dump({"k": value}) == f"k: '{value}'\n"


# The implicit types of both specs, as the specs write them (not the writer's own table):
# YAML 1.1, yaml.org/type/{bool,int,float,null,merge,value,timestamp}.html; YAML 1.2.2,
# 10.3.2 "Tag Resolution" of the core schema.
SPEC_NON_STRINGS = {
    "1.1 bool": r"y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF",
    "1.1 int": r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+",
    "1.1 float": r"[-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)",
    "1.1 null": r"~|null|Null|NULL|",
    "1.1 merge and value": r"<<|=",
    "1.1 timestamp": r"[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
    r"|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9]"
    r"(\.[0-9]*)?(([ \t]*)Z|[-+][0-9][0-9]?(:[0-9][0-9])?)?",
    "1.2 null": r"null|Null|NULL|~",
    "1.2 bool": r"true|True|TRUE|false|False|FALSE",
    "1.2 int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
    "1.2 float": r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
    r"|[-+]?(\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN",
}


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(sorted(SPEC_NON_STRINGS)).flatmap(
        lambda t: st.from_regex(f"(?:{SPEC_NON_STRINGS[t]})", fullmatch=True)
    )
)
def test_class8_every_string_either_spec_reads_as_another_type_is_quoted(value: str) -> None:
    for written in (fastdump.dump({"k": value}), yamlio.dump({"k": value})):
        assert written != f"k: {value}\n", "written plain"
        assert yaml.safe_load(written) == {"k": value}
        assert YAML(typ="safe", pure=True).load(written) == {"k": value}


def test_class8_a_lone_surrogate_in_json_is_refused_with_its_place() -> None:
    # YAML has no such character and UTF-8 cannot carry it: refused as YAML refuses it
    rl = yamlio.load_all(run(rest=NODES + CM + "    a: x\n"))[0]
    text = json.dumps(rl, indent=1).replace('"a": "x"', '"a": "x\\ud800"')
    out = run_krm(text.encode())
    assert out.exit_code == 1
    line = text[: text.index("\\ud800")].count("\n") + 1
    assert f"invalid Unicode character escape code (line {line}," in out.stderr[0]


@pytest.mark.parametrize(
    ("char", "escaped"),
    [("\x7f", "\\u007f"), ("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\ufffe", "\\ufffe")],
    ids=["del", "nel-a-line-break-to-yaml", "line-separator", "noncharacter"],
)
def test_class8_json_output_escapes_what_yaml_cannot_print(char: str, escaped: str) -> None:
    rl = yamlio.load_all(run(rest=NODES + CM + "    a: x\n"))[0]
    text = json.dumps(rl).replace('"a": "x"', f'"a": "x{escaped}"')
    out = run_krm(text.encode())
    assert out.exit_code == 0, out.stderr
    sink = io.BytesIO()
    write_chunks(out.chunks, sink)
    written = sink.getvalue().decode("utf-8")
    assert char not in written and escaped in written
    for back in (yaml.safe_load(written), json.loads(written)):
        cm = next(i for i in back["items"] if i["kind"] == "ConfigMap")
        assert cm["data"] == {"a": f"x{char}"}


@pytest.mark.parametrize("number", ["1e400", "-1e400", "NaN", "Infinity"])
def test_class8_a_json_number_yaml_cannot_hold_is_refused_with_its_place(number: str) -> None:
    rl = yamlio.load_all(run(rest=NODES + CM + "    a: x\n"))[0]
    text = json.dumps(rl, indent=1).replace('"a": "x"', f'"a": {number}')
    out = run_krm(text.encode())
    assert out.exit_code == 1
    line = text[: text.index(number)].count("\n") + 1
    assert f"JSON number {number} is not finite" in out.stderr[0]
    assert f"(line {line}, column" in out.stderr[0]


def test_class8_a_duplicate_json_key_is_refused_with_its_place() -> None:
    rl = yamlio.load_all(run(rest=NODES + CM + "    a: x\n"))[0]
    text = json.dumps(rl, indent=1).replace('"a": "x"', '"a": "x", "a": "y"')
    out = run_krm(text.encode())
    assert out.exit_code == 1
    assert "duplicate key 'a' (line" in out.stderr[0]


def test_class9_a_merge_key_may_be_overridden_by_the_mappings_own_key() -> None:
    out = same_as_full_reader(run(rest=NODES + CM + "    <<: {k: a}\n    k: b\n"))
    assert out.exit_code == 0, out.stderr
    assert item(out, "ConfigMap", "c")["data"] == {"k": "b"}
    assert yaml.safe_load("<<: {k: a}\nk: b\n") == yamlio.load_all("<<: {k: a}\nk: b\n")[0]
