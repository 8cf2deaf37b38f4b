"""The function's answer on YAML spelled every way is its answer on the same content as JSON.

Hypothesis draws the content (a WorkloadRun whose env values and ``config.inline`` hold
strings YAML 1.1 or 1.2 reads as other types or that end in newlines; GPU Nodes with such
labels, taints, conditions with long messages; a passed-through ConfigMap and a custom
object) and a *spelling* of it: block mappings indented by 2 or 4, sequences compact or
indented, plain, single- and double-quoted scalars, literal and folded block scalars with
every chomping indicator, trailing and full-line comments, anchors and aliases, flow
collections, CRLF line breaks, a byte order mark. Every input form is tried: ResourceList
items, a ResourceList with a ``v1 List`` item, a plain stream (against the same documents
written as JSON), JSON itself spelled with other whitespace, and the ``render`` files.

Each YAML answer must equal the JSON answer (exit code, stderr, every output object) and be
read alike by PyYAML, ruamel.yaml (YAML 1.2) and a port of Go yaml.v3's resolver
(:func:`go_resolves_to_str`, what kpt and kustomize use): no plain scalar of the output may
be a string to PyYAML and another type to Go.

Bounded by the suite's ``slow`` cap (25 examples per test); ``--slow`` runs 1,000 each.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from krm_fn.entry.preview import preview
from krm_fn.entry.run import RunOutcome, run_krm
from krm_fn.io import yamlio
from tests.builders import IMAGE, MPI, node, wr

SETTINGS = settings(
    max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)

# --------------------------------------------------------------------------- Go's reading


_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_MAP = {
    *("true", "True", "TRUE", "false", "False", "FALSE"),
    *("", "~", "null", "Null", "NULL", "<<"),
    *(f"{s}.{w}" for s in ("", "+", "-") for w in ("inf", "Inf", "INF")),
    *(".nan", ".NaN", ".NAN"),
}
_GO_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"(?:[Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:[.,][0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2})?)?"
)


def _go_int(text: str) -> bool:
    """``strconv.ParseInt(text, 0, 64)`` succeeding (or ParseUint): Go's base-0 integer syntax."""
    body = text[1:] if text[:1] in "+-" else text
    for prefix, digits in (("0x", string.hexdigits), ("0o", "01234567"), ("0b", "01")):
        if body[:2].lower() == prefix:
            return len(body) > 2 and all(c in digits for c in body[2:])
    if len(body) > 1 and body[0] == "0":
        return all(c in "01234567" for c in body)
    return body.isdigit() and body.isascii()


def go_resolves_to_str(plain: str) -> bool:
    """Whether Go's yaml.v3 (kyaml: kpt, kustomize) reads this plain scalar as a string.

    A port of ``resolve()`` in go-yaml v3's resolve.go for untagged plain scalars: its
    table of words, then for a leading digit or sign a timestamp, an integer in Go's syntax
    (underscores removed), a float, ``0b``/``0o`` integers; for a leading dot, a float.
    """
    if plain in _GO_MAP:
        return False
    hint = plain[:1]
    if hint == ".":
        return _GO_FLOAT.fullmatch(plain) is None  # strconv.ParseFloat of ".5", ".5e3"
    if hint not in set("+-0123456789"):
        return True
    if _GO_TIMESTAMP.fullmatch(plain):
        return False
    bare = plain.replace("_", "")
    return not (_go_int(bare) or _GO_FLOAT.fullmatch(bare))


# --------------------------------------------------------------------------- content

TRICKY = [
    *("08", "1e3", "0o17", "0x1F", "0b11", "1_000", ".inf", "-.5", "+1", "1.", "2024-1-2"),
    *("2024-01-02 10:20:30,5", "2024-1-2T1:2:3,999Z"),  # Go's time.Parse takes a comma too
    *("yes", "no", "on", "off", "y", "n", "~", "null", "true", "False", "=", "<<", "1:20"),
    *("", " lead", "trail ", "a: b", "a #b", "#c", "-", "- x", "'q'", '"dq"', "*a", "&a"),
    *("x\n", "x\n\n", "x\n\n\n", "\n", "two\nlines", "two\nlines\n", "é", "%p", "@t", "`b"),
    *("---", "...", "a\tb", "{b}", "[b]", "long " * 30),
]
_text = st.text(
    st.characters(min_codepoint=32, max_codepoint=0xFFFD, blacklist_categories=("Cs", "Cc")),
    max_size=12,
)
strings = st.one_of(st.sampled_from(TRICKY), _text)
label_keys = st.sampled_from(["a.example.com/k", "k", "x/y.z", "on", "1", "yes", "k-2"])


@st.composite
def content(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A WorkloadRun, two GPU Nodes and passed-through objects, full of tricky strings."""
    env = [{"name": f"V{i}", "value": draw(strings)} for i in range(draw(st.integers(0, 3)))]
    spec: dict[str, Any] = {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 1}
    if env:
        spec["env"] = env
    if draw(st.booleans()):
        spec["config"] = {"inline": {"run.sh": draw(strings) or "x"}}
    run = wr("pairs", spec)
    nodes = []
    for i in range(2):
        n = node(f"gpu-{i}", labels=draw(st.dictionaries(label_keys, strings, max_size=3)))
        if draw(st.booleans()):
            n["spec"]["taints"] = [{"key": "k", "value": draw(strings), "effect": "NoSchedule"}]
        if draw(st.booleans()):
            n["status"]["conditions"].insert(
                0, {"type": "MemoryPressure", "status": "False", "message": draw(strings)}
            )
        if draw(st.booleans()):
            n["status"]["images"] = [{"names": ["nvcr.io/a:1", draw(strings)], "sizeBytes": 7}]
        nodes.append(n)
    data = draw(st.dictionaries(st.sampled_from(["a", "b.sh", "on"]), strings, max_size=3))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data}
    other = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {
            "n": draw(st.integers(-10, 10**6)),
            "on": draw(st.booleans()),
            "x": None,
            "list": draw(st.lists(strings, max_size=3)),
            "empty": {},
            "none": [],
        },
    }
    return [run, *nodes, cm, other]


# --------------------------------------------------------------------------- spellings

_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./ :=-]*")


class Speller:
    """Writes plain data as YAML, every choice drawn from hypothesis."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.anchors: dict[str, str] = {}
        self.count = 0

    def choose(self, options: list[str]) -> str:
        return self.draw(st.sampled_from(options))

    def token(self, value: Any, flow: bool = False) -> str | None:
        """A one-line spelling of a scalar; ``None`` when only a block scalar fits."""
        if value is None:
            return self.choose(["null", "~"] if flow else ["null", "~", ""])
        if isinstance(value, bool):
            return self.choose(["true", "True"] if value else ["false", "FALSE"])
        if isinstance(value, int):
            return str(value)
        ways = ["double"]
        if "\n" not in value and value.isprintable():
            ways.append("single")
            if (
                _PLAIN.fullmatch(value)
                and value == value.strip()
                and ": " not in value
                and not value.endswith(":")
                and _plain_reads_back(value)
                and not (flow and set(value) & set(",[]{}"))
            ):
                ways.append("plain")
        if not flow and "\n" in value.rstrip("\n") and self._block_ok(value):
            ways.append("block")
        way = self.choose(ways)
        if way == "block":
            return None
        text = {
            "plain": value,
            "single": "'" + value.replace("'", "''") + "'",
            "double": json.dumps(value, ensure_ascii=self.draw(st.booleans())),
        }[way]
        if not flow and value in self.anchors and self.draw(st.booleans()):
            return "*" + self.anchors[value]
        if not flow and way != "plain" and self.draw(st.integers(0, 5)) == 0:
            self.count += 1
            name = self.anchors[value] = f"a{self.count}"
            return f"&{name} {text}"
        return text

    @staticmethod
    def _block_ok(value: str) -> bool:
        lines = value.rstrip("\n").split("\n")
        return bool(lines[0]) and all(
            not ln or (ln[0] not in " \t" and ln.isprintable() and ln == ln.rstrip())
            for ln in lines
        )

    def comment(self) -> str:
        return "  # c" if self.draw(st.integers(0, 6)) == 0 else ""

    def block_scalar(self, value: str, ind: int) -> list[str]:
        body = value.rstrip("\n")
        trailing = len(value) - len(body)
        chomp = "-" if trailing == 0 else self.choose(["", "+"]) if trailing == 1 else "+"
        style = "|" if "\n" in body else self.choose(["|", ">"])
        pad = " " * ind
        lines = [pad + ln if ln else "" for ln in body.split("\n")]
        return [style + chomp, *lines, *[""] * (trailing - 1 if chomp == "+" else 0)]

    def flow(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{self.key(k)}: {self.flow(v)}" for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(self.flow(v) for v in value) + "]"
        token = self.token(value, flow=True) if not isinstance(value, str) else None
        return token if token is not None else json.dumps(value)

    def key(self, k: str) -> str:
        if _PLAIN.fullmatch(k) and " " not in k and _plain_reads_back(k):
            return self.choose([k, k, json.dumps(k)])
        return json.dumps(k)

    def _flowable(self, value: Any) -> bool:
        return bool(value) and not any(isinstance(v, str) and "\n" in v for v in _leaves(value))

    def value(self, head: str, value: Any, ind: int) -> list[str]:
        """``head`` (``key:`` or ``-``) with ``value`` after it; nested lines deeper than ``ind``."""
        if isinstance(value, dict | list):
            if not value:
                return [f"{head} {'{}' if isinstance(value, dict) else '[]'}"]
            if self._flowable(value) and self.draw(st.integers(0, 5)) == 0:
                return [f"{head} {self.flow(value)}{self.comment()}"]
            if isinstance(value, dict):
                return [head + self.comment(), *self.mapping(value, ind + self.choose([2, 4]))]
            step = 0 if head != "-" and self.draw(st.booleans()) else 2
            return [head, *self.sequence(value, ind + step)]
        token = self.token(value)
        if token is None:
            return [
                f"{head} " + ln if i == 0 else ln
                for i, ln in enumerate(self.block_scalar(value, ind + 2))
            ]
        return [f"{head} {token}".rstrip() + (self.comment() if token else "")]

    def mapping(self, obj: dict[str, Any], ind: int) -> list[str]:
        out: list[str] = []
        for k, v in obj.items():
            if self.draw(st.integers(0, 8)) == 0:
                out.append(" " * ind + "# note")
            lines = self.value(f"{self.key(k)}:", v, ind)
            out += [" " * ind + lines[0], *lines[1:]]
        return out

    def sequence(self, seq: list[Any], ind: int) -> list[str]:
        out: list[str] = []
        for v in seq:
            if isinstance(v, dict) and v:
                sub = self.mapping(v, ind + 2)
                out += [" " * ind + "- " + sub[0][ind + 2 :], *sub[1:]]
            elif isinstance(v, list) and v:
                out.append(" " * ind + "- " + self.flow(v))
            else:
                lines = self.value("-", v, ind)
                out += [" " * ind + lines[0], *lines[1:]]
        return out

    def document(self, obj: dict[str, Any]) -> str:
        self.anchors = {}  # anchors are the document's own
        return "\n".join(self.mapping(obj, 0)) + "\n"

    def finish(self, text: str) -> str:
        """Line breaks and the byte order mark."""
        if self.draw(st.integers(0, 5)) == 0:
            text = text.replace("\n", "\r\n")
        return ("\ufeff" if self.draw(st.integers(0, 9)) == 0 else "") + text


def _plain_reads_back(value: str) -> bool:
    """Plain ``value`` is this string to every reader (an input that means one thing)."""
    try:
        return bool(yaml.safe_load(value) == value) and yamlio.plain_is_str(value)
    except yaml.YAMLError:
        return False


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def _json_stream(objs: list[Any]) -> str:
    """Documents written as JSON (which YAML reads) in a ``---`` stream."""
    return "---\n".join(json.dumps(o) + "\n" for o in objs)


def resource_list(items: list[Any]) -> dict[str, Any]:
    return {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}


# --------------------------------------------------------------------------- checks


def read_alike(text: str) -> list[Any]:
    """The documents of an output; PyYAML, ruamel.yaml and Go's resolver read them alike."""
    docs = [d for d in yamlio.load_all(text) if d is not None]
    ruamel = [d for d in YAML(typ="safe", pure=True).load_all(text) if d is not None]
    assert ruamel == docs, f"ruamel.yaml reads {_difference(ruamel, docs)}"
    for n in _plain_scalars(yaml.compose_all(text, Loader=yaml.SafeLoader)):
        if n.tag == "tag:yaml.org,2002:str":
            assert go_resolves_to_str(n.value), f"Go reads plain {n.value!r} as another type"
    return docs


def _plain_scalars(nodes: Any) -> Any:
    for n in nodes:
        if isinstance(n, yaml.ScalarNode):
            if n.style is None:
                yield n
        elif isinstance(n, yaml.SequenceNode):
            yield from _plain_scalars(n.value)
        elif isinstance(n, yaml.MappingNode):
            yield from _plain_scalars(x for pair in n.value for x in pair)


def same_answer(yaml_out: RunOutcome, json_out: RunOutcome, objects: Callable[[Any], Any]) -> None:
    note(f"YAML answer: {yaml_out.exit_code} {yaml_out.stderr}")
    assert (yaml_out.exit_code, yaml_out.stderr) == (json_out.exit_code, json_out.stderr)
    if json_out.exit_code == 0:
        got, want = objects(read_alike(yaml_out.stdout)), objects(json.loads(json_out.stdout))
        assert got == want, _difference(got, want)


def _difference(a: Any, b: Any, path: str = "") -> str:
    """Where two objects first differ, and how (for the failure message)."""
    if type(a) is not type(b) or not isinstance(a, dict | list):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, list) and len(a) != len(b):
        return f"{path}: {len(a)} entries != {len(b)}"
    pairs = (
        zip(a, b, strict=True)
        if isinstance(a, list)
        else ((a.get(k), b.get(k)) for k in {**a, **b})
    )
    keys = range(len(a)) if isinstance(a, list) else list({**a, **b})
    for k, (x, y) in zip(keys, pairs, strict=True):
        if x != y:
            return _difference(x, y, f"{path}/{k}")
    return path


def _doc(doc: Any) -> Any:
    return doc[0] if isinstance(doc, list) else doc


# --------------------------------------------------------------------------- properties


@pytest.mark.slow
@SETTINGS
@given(content(), st.data())
def test_resource_list_items_read_as_their_json(
    objs: list[dict[str, Any]], data: st.DataObject
) -> None:
    sp = Speller(data.draw)
    items = "\n".join(sp.sequence(objs, sp.choose([0, 2]))) + "\n"
    text = sp.finish(f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}")
    note(text)
    same_answer(run_krm(text.encode()), run_krm(json.dumps(resource_list(objs)).encode()), _doc)


@pytest.mark.slow
@SETTINGS
@given(content(), st.data())
def test_a_v1_list_item_reads_as_its_json(objs: list[dict[str, Any]], data: st.DataObject) -> None:
    run, n1, n2, *rest = objs
    lst = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [n1, n2],
    }
    sp = Speller(data.draw)
    whole = resource_list([run, lst, *rest])
    text = sp.finish(sp.document(whole))
    note(text)
    same_answer(run_krm(text.encode()), run_krm(json.dumps(whole).encode()), _doc)


@pytest.mark.slow
@SETTINGS
@given(content(), st.data())
def test_a_plain_stream_reads_as_its_documents_in_json(
    objs: list[dict[str, Any]], data: st.DataObject
) -> None:
    sp = Speller(data.draw)
    lead = sp.choose(["", "---\n", "# head\n---\n"])
    text = sp.finish(lead + "---\n".join(sp.document(o) for o in objs))
    as_json = _json_stream(objs)
    note(text)
    yaml_out, json_out = run_krm(text.encode()), run_krm(as_json.encode())
    assert (yaml_out.exit_code, yaml_out.stderr) == (json_out.exit_code, json_out.stderr)
    if json_out.exit_code == 0:
        assert read_alike(yaml_out.stdout) == read_alike(json_out.stdout)


@pytest.mark.slow
@SETTINGS
@given(content(), st.data())
def test_json_spelled_otherwise_is_the_same_json(
    objs: list[dict[str, Any]], data: st.DataObject
) -> None:
    whole = resource_list(objs)
    lead = data.draw(st.sampled_from(["", " " * 80, "\n\n", "\ufeff", "\r\n"]))
    text = lead + json.dumps(whole, indent=data.draw(st.sampled_from([None, 1, 4])))
    same_answer(run_krm(text.encode()), run_krm(json.dumps(whole).encode()), _doc)


@pytest.mark.slow
@SETTINGS
@given(content(), st.data())
def test_render_files_read_as_their_json(
    tmp_path_factory: pytest.TempPathFactory, objs: list[dict[str, Any]], data: st.DataObject
) -> None:
    run, n1, n2, *rest = objs
    sp = Speller(data.draw)
    as_list = data.draw(st.booleans())
    lst = {"apiVersion": "v1", "kind": "List", "items": [n1, n2]}
    yaml_files = {
        "run.yaml": sp.finish(sp.document(run)),
        "nodes.yaml": sp.finish(
            sp.document(lst) if as_list else "---\n".join(sp.document(n) for n in (n1, n2))
        ),
        "more.yaml": sp.finish("---\n".join(sp.document(o) for o in rest)),
    }
    json_files = {
        "run.yaml": json.dumps(run),
        "nodes.yaml": json.dumps(lst) if as_list else _json_stream([n1, n2]),
        "more.yaml": _json_stream(rest),
    }
    answers = []
    for files in (yaml_files, json_files):
        root = tmp_path_factory.mktemp("render")
        for name, text in files.items():
            (root / name).write_bytes(text.encode())
        paths = [str(root / name) for name in files]
        code, out, err = preview(paths, None, None, None, "yaml")
        answers.append(
            (code, read_alike(out) if code == 0 else out, [e.replace(str(root), "") for e in err])
        )
    assert answers[0] == answers[1]


def test_the_go_resolver_port_agrees_with_kustomize_on_what_it_was_seen_to_do() -> None:
    """The values ``kubectl kustomize`` was seen to turn into numbers, and ones it kept."""
    for plain in ("08", "1e3", "0o17", "1_0", "0b11", ".5", "1.", "017", "+1", "-0x1F"):
        assert not go_resolves_to_str(plain), plain
    for plain in ("y", "n", "yes", "on", "1.2.3", "0x", "1e", "v1", "2024-13", "nan"):
        assert go_resolves_to_str(plain), plain
