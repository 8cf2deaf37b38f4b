"""The local-config edit: where ``config.kubernetes.io/local-config`` goes in an item's text.

Invariants:
    * The new key goes where ``mark_local_config`` puts it in the dict: last in
      ``metadata.annotations`` (a new ``annotations`` last in ``metadata``, a new
      ``metadata`` last in the item), spelled ``'true'`` as PyYAML writes it.
    * An edit from the line structure (:func:`_edit_or_none`) is made only when the
      structure says for certain where the key goes; otherwise PyYAML's marks place it,
      ruamel.yaml's round-trip is the next resort, and every such edit is verified by
      parsing it (:func:`insert_local_config`), so user comments survive.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from krm_fn.io import yamlio
from krm_fn.io.fastio.grammar import _ENTRY, _FLAT
from krm_fn.io.fastio.model import _LOCAL_LINE, LOCAL_CONFIG, Item, _load_item
from krm_fn.io.fastio.scalars import Irregular, _decode


def _edit_or_none(
    text: str,
    it: Item,
    meta_m: re.Match[str] | None,
    meta: Mapping[str, re.Match[str]] | None,
) -> tuple[int, int, str] | None:
    """The local-config edit of a regular item (keys at 2) from its line structure.

    ``(a, b, new)``: ``text[a:b]`` becomes ``new``. ``None`` when the structure does not
    say for certain where the key goes (:func:`insert_local_config` then places it).
    """
    if meta_m is None:
        return it.end, it.end, "  metadata:\n    annotations:\n      " + _LOCAL_LINE
    if meta is None:  # metadata: {}
        new = "\n    annotations:\n      " + _LOCAL_LINE
        return meta_m.start(2) - 1, meta_m.end(3), new
    ann = meta.get("annotations")
    if ann is None:
        at = meta_m.end(3)
        return at, at, "    annotations:\n      " + _LOCAL_LINE
    raw = ann.group(2)
    s3, e3 = ann.span(3)
    if raw is not None:
        if raw == "{}" and s3 == e3:
            return ann.start(2) - 1, ann.end(3), "\n      " + _LOCAL_LINE
        return None
    if _ENTRY[6].match(text, s3, e3) is None:
        return None  # not a block mapping at 6 (a sequence, a null): PyYAML's marks
    at = text.find("\n      " + LOCAL_CONFIG + ":", s3 - 1, e3)
    if at < 0:
        return e3, e3, "      " + _LOCAL_LINE
    line = _FLAT[6].match(text, at, e3)
    if (
        line is None
        or line.group(1) != LOCAL_CONFIG
        or text.find(text[at : line.start(2)], line.end(), e3) >= 0
    ):
        return None  # not one line, or the key twice (PyYAML refuses that)
    if text.startswith("       ", line.end() + 1):
        return None  # the value spans lines
    try:
        if _decode(line.group(2)) == "true":
            return at, at, ""
    except Irregular:
        pass
    return line.start(2), line.end(2), "'true'"


def insert_local_config(text: str, obj: dict[str, Any]) -> str:
    """``text`` (one ``- `` entry, parsed as ``obj``) with the local-config annotation.

    The annotation is inserted into the text at the position PyYAML's marks give, keeping
    every comment and all formatting; the result is parsed again and must equal ``obj``
    with the annotation set. Otherwise ruamel.yaml's round-trip writes the item, and as a
    last resort the item is written from ``obj``.
    """
    from krm_fn.io.fastdump import dump_item
    from krm_fn.io.output import mark_local_config

    want = copy.deepcopy(obj)
    mark_local_config(want)
    if want == obj:
        return text
    for attempt in (_insert_by_marks, _insert_by_ruamel):
        try:
            new = attempt(text)
        except Exception:  # any failure just means "try the next way"
            continue
        if new is not None and _parses_to(new, want):
            return new
    return dump_item(want)


def _parses_to(text: str, want: dict[str, Any]) -> bool:
    try:
        return _load_item(text) == want
    except (Irregular, yamlio.YAMLInputError, RecursionError):
        return False


_LOCAL_FLOW = f"{LOCAL_CONFIG}: 'true'"


class _Marks:
    """Offsets in ``text`` of PyYAML's marks, and insertions at them."""

    __slots__ = ("lines", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = [0, *(m.end() for m in re.finditer("\n", text))]

    def at(self, mark: Any) -> int:
        """Offset of ``mark`` (the end of the text past the last line)."""
        lines = self.lines
        return int(lines[mark.line] + mark.column) if mark.line < len(lines) else len(self.text)

    def after(self, n: yaml.Node) -> int:
        """Offset of the line after the one node ``n`` ends on."""
        lines, mk = self.lines, n.end_mark
        if mk.column == 0:
            return lines[mk.line] if mk.line < len(lines) else len(self.text)
        return lines[mk.line + 1] if mk.line + 1 < len(lines) else len(self.text)

    def insert(self, offset: int, new: str) -> str:
        """The text with ``new`` inserted at ``offset``."""
        return self.text[:offset] + new + self.text[offset:]

    def flow_add(self, mapping: yaml.MappingNode, entry: str) -> str | None:
        """``entry`` added last inside a flow mapping ``{...}``."""
        end = self.at(mapping.end_mark)
        if end == 0 or self.text[end - 1] != "}":
            return None
        sep = ", " if mapping.value else ""
        return self.insert(end - 1, sep + entry)


def _insert_by_marks(text: str) -> str | None:
    """The annotation inserted where PyYAML's marks say, block or flow style alike.

    ``None`` when the item (one ``- `` entry) is not a mapping whose metadata and
    annotations are mappings (the next way is tried).
    """
    node, _ = yamlio.compose_and_load(text)
    if not isinstance(node, yaml.SequenceNode) or len(node.value) != 1:
        return None
    item = node.value[0]
    if not isinstance(item, yaml.MappingNode) or not item.value:
        return None
    marks = _Marks(text)
    meta = next((v for k, v in item.value if getattr(k, "value", None) == "metadata"), None)
    if meta is None:
        if item.flow_style:
            return marks.flow_add(item, f"metadata: {{annotations: {{{_LOCAL_FLOW}}}}}")
        pad = " " * int(item.value[0][0].start_mark.column)
        body = f"{pad}metadata:\n{pad}  annotations:\n{pad}    {_LOCAL_LINE}"
        return marks.insert(marks.after(item.value[-1][1]), body)
    if not isinstance(meta, yaml.MappingNode):
        return None
    ann_pair = next((p for p in meta.value if getattr(p[0], "value", None) == "annotations"), None)
    if meta.flow_style:
        return _insert_in_flow_metadata(marks, meta, ann_pair)
    return _insert_in_block_metadata(marks, meta, ann_pair)


def _insert_in_flow_metadata(
    marks: _Marks, meta: yaml.MappingNode, ann_pair: tuple[yaml.Node, yaml.Node] | None
) -> str | None:
    """The annotation set in a flow-style ``metadata: {...}`` (``None``: annotations not flow)."""
    if ann_pair is None:
        return marks.flow_add(meta, f"annotations: {{{_LOCAL_FLOW}}}")
    ann = ann_pair[1]
    if not isinstance(ann, yaml.MappingNode) or not ann.flow_style:
        return None
    for k, v in ann.value:
        if getattr(k, "value", None) == LOCAL_CONFIG:
            return _replace_scalar(marks.text, v, marks.at)
    return marks.flow_add(ann, _LOCAL_FLOW)


def _insert_in_block_metadata(
    marks: _Marks, meta: yaml.MappingNode, ann_pair: tuple[yaml.Node, yaml.Node] | None
) -> str | None:
    """The annotation last in (a new) ``annotations`` of a block ``metadata``.

    ``None`` when ``metadata`` is empty or ``annotations`` is not a non-empty mapping.
    """
    if not meta.value:
        return None
    mcol = int(meta.value[0][0].start_mark.column)
    if ann_pair is None:
        body = f"{' ' * mcol}annotations:\n{' ' * (mcol + 2)}{_LOCAL_LINE}"
        return marks.insert(marks.after(meta.value[-1][1]), body)
    ann = ann_pair[1]
    if not isinstance(ann, yaml.MappingNode) or not ann.value:
        return None
    for k, v in ann.value:
        if getattr(k, "value", None) == LOCAL_CONFIG:
            return _replace_scalar(marks.text, v, marks.at)
    if ann.flow_style:
        return marks.flow_add(ann, _LOCAL_FLOW)
    acol = int(ann.value[0][0].start_mark.column)
    return marks.insert(marks.after(ann.value[-1][1]), " " * acol + _LOCAL_LINE)


def _replace_scalar(text: str, v: yaml.Node, at: Callable[[Any], int]) -> str | None:
    """``text`` with the one-line scalar ``v`` replaced by ``'true'``."""
    if not isinstance(v, yaml.ScalarNode) or v.start_mark.line != v.end_mark.line:
        return None
    return text[: at(v.start_mark)] + "'true'" + text[at(v.end_mark) :]


def _insert_by_ruamel(text: str) -> str | None:
    import io

    from ruamel.yaml import YAML

    from krm_fn.io.output import mark_local_config

    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 1 << 30
    rt.indent(mapping=2, sequence=2, offset=0)
    data = rt.load(text)
    if not isinstance(data, list) or len(data) != 1 or not isinstance(data[0], dict):
        return None
    mark_local_config(data[0])
    out = io.StringIO()
    rt.dump(data, out)
    return str(out.getvalue())
