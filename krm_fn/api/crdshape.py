"""Strict structural check of generated Trainer objects against the pinned CRDs, at run time.

The function cannot read ``../shared/schemas/crds`` when it runs, so it carries a small table
DERIVED from those CRDs (``krm_fn/data/crd_shapes.json``): every schema node reduced to what
an unknown-field and type check needs (type, property names, items, map values, the
``x-kubernetes-preserve-unknown-fields`` / ``int-or-string`` escapes and the list-map keys),
with identical nodes stored once. ``tests/test_crdshape.py`` regenerates the table from the
CRDs with :func:`derive` and asserts it is identical to the committed file.

Invariants:
    * :func:`derive` is deterministic: the same CRDs give byte-identical JSON.
    * :func:`unknown_fields` reports what the API server's strict field validation reports:
      a field the schema does not declare (under a node that does not preserve unknown
      fields), and a value of the wrong JSON type (``null`` is accepted where the schema is
      nullable or the field is optional, as the API server drops it); never anything else.
    * Problems carry the dotted field path inside the object, e.g.
      ``spec.trainer.envv`` or ``spec.runtimePatches[0].trainingRuntimeSpec.x``.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from typing import Any, Final

KINDS: Final[Mapping[str, str]] = {
    "TrainJob": "trainer.kubeflow.org_trainjobs.yaml",
    "TrainingRuntime": "trainer.kubeflow.org_trainingruntimes.yaml",
}
"""Kinds the table covers, and the pinned CRD file each is derived from."""


def data_path(name: str) -> str:
    """Where the committed table ``name`` lives (``krm_fn/data``)."""
    return os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", name)


@functools.cache
def read_table(path: str) -> dict[str, Any]:
    """The committed JSON table at ``path``, read once."""
    with open(path, encoding="utf-8") as fh:
        table: dict[str, Any] = json.load(fh)
    return table


def storage_schema(crd: Mapping[str, Any]) -> Any:
    """The ``openAPIV3Schema`` of the CRD's storage version."""
    (version,) = [v for v in crd["spec"]["versions"] if v.get("storage")]
    return version["schema"]["openAPIV3Schema"]


TABLE_PATH: Final = data_path("crd_shapes.json")
"""The committed table."""

_TYPES: Final = {"object": "o", "array": "a", "string": "s", "integer": "i", "number": "n",
                 "boolean": "b"}  # fmt: skip


def dumps(table: Mapping[str, Any]) -> str:
    """The table as committed: compact, sorted JSON with a final newline."""
    return json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n"


def derive(crds: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Reduce CRD documents (kind -> parsed CRD) to the run-time table.

    The table is ``{"nodes": [node, ...], "roots": {kind: node index}}``; a node is a dict
    with ``t`` (type letter), ``p`` (property -> node), ``i`` (items node), ``m`` (map values
    node), ``x`` (preserve unknown fields), ``q`` (int-or-string), ``k`` (list-map keys).
    """
    nodes: list[dict[str, Any]] = []
    index: dict[str, int] = {}

    def intern(node: dict[str, Any]) -> int:
        key = json.dumps(node, sort_keys=True, separators=(",", ":"))
        if key not in index:
            index[key] = len(nodes)
            nodes.append(node)
        return index[key]

    def walk(schema: Mapping[str, Any]) -> int:
        node: dict[str, Any] = {}
        t = schema.get("type")
        if isinstance(t, str) and t in _TYPES:
            node["t"] = _TYPES[t]
        if schema.get("x-kubernetes-int-or-string"):
            node["q"] = 1
            node.pop("t", None)
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            node["x"] = 1
        props = schema.get("properties")
        if isinstance(props, Mapping):
            node["p"] = {name: walk(sub) for name, sub in sorted(props.items())}
        items = schema.get("items")
        if isinstance(items, Mapping):
            node["i"] = walk(items)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            node["m"] = walk(extra)
        keys = schema.get("x-kubernetes-list-map-keys")
        if isinstance(keys, list) and schema.get("x-kubernetes-list-type") == "map":
            node["k"] = [str(k) for k in keys]
        return intern(node)

    roots: dict[str, int] = {}
    for kind in sorted(crds):
        roots[kind] = walk(storage_schema(crds[kind]))
    return {"nodes": nodes, "roots": roots}


def load_table() -> dict[str, Any]:
    """The committed table (``krm_fn/data/crd_shapes.json``)."""
    return read_table(TABLE_PATH)


_METADATA: Final = frozenset(
    {"name", "namespace", "labels", "annotations", "generateName", "finalizers",
     "ownerReferences", "uid", "resourceVersion", "generation", "creationTimestamp",
     "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"}
)  # fmt: skip
"""ObjectMeta fields: CRDs declare ``metadata`` as a bare object the API server fills in."""


_PYTHON: Final[Mapping[str, tuple[type, ...]]] = {
    "o": (dict,), "a": (list,), "s": (str,), "b": (bool,), "i": (int,), "n": (int, float)
}  # fmt: skip
"""The Python types a value of each type letter may have (a bool is never a number)."""


def _type_ok(letter: str, value: Any) -> bool:
    return isinstance(value, _PYTHON[letter]) and (letter == "b" or not isinstance(value, bool))


_NAMES: Final = {"o": "an object", "a": "a list", "s": "a string", "i": "an integer",
                 "n": "a number", "b": "a boolean"}  # fmt: skip


def unknown_fields(kind: str, obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    """``(dotted path, message)`` for each field the ``kind`` CRD lacks or value it mistypes.

    With ``prefix`` (a dotted path), ``obj`` is the part of the object found there.
    """
    table = load_table()
    nodes: list[dict[str, Any]] = table["nodes"]
    node = nodes[table["roots"][kind]]
    for part in [p for p in prefix.split(".") if p]:
        name = part.split("[", 1)[0]
        node = nodes[node["p"][name]]
        if "[" in part:
            node = nodes[node["i"]]
    out: list[tuple[str, str]] = []
    _walk(nodes, node, obj, prefix, out, top=not prefix)
    return out


def _known(key: str, props: Mapping[str, int]) -> str:
    import difflib  # only unknown fields need it

    close = difflib.get_close_matches(key, list(props), n=1, cutoff=0.75)
    return (
        f"did you mean {close[0]!r}?"
        if close
        else f"known fields here: {', '.join(sorted(props)) or 'none'}"
    )


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _metadata(meta: Any, path: str, out: list[tuple[str, str]]) -> None:
    """ObjectMeta's keys, and the string values the API server wants of names and maps."""
    for key, value in meta.items() if isinstance(meta, dict) else ():
        at = _join(path, str(key))
        if key not in _METADATA:
            out.append((at, f"unknown field {key!r} in metadata"))
        elif key in ("name", "namespace", "generateName") and not isinstance(value, str):
            out.append((at, f"must be a string, got {type(value).__name__}"))
        elif key in ("labels", "annotations") and value is not None:
            if not isinstance(value, dict):
                out.append((at, f"must be a map of strings, got {type(value).__name__}"))
                continue
            for k, v in value.items():
                if not isinstance(v, str):
                    name = type(v).__name__
                    out.append((_join(at, str(k)), f"must be a string (quote it), got {name}"))


def _walk(
    nodes: list[dict[str, Any]],
    node: Mapping[str, Any],
    value: Any,
    path: str,
    out: list[tuple[str, str]],
    top: bool = False,
) -> None:
    if value is None or node.get("q"):
        if node.get("q") and not isinstance(value, (int, str)) and value is not None:
            out.append((path, f"must be an integer or a string, got {type(value).__name__}"))
        return
    letter = node.get("t")
    if letter and not _type_ok(letter, value):
        out.append((path, f"must be {_NAMES[letter]}, got {type(value).__name__}"))
        return
    if isinstance(value, dict):
        props: Mapping[str, int] = node.get("p") or {}
        for key, sub in value.items():
            at = _join(path, str(key))
            if top and key == "metadata":
                _metadata(sub, at, out)
                continue
            if key in props:
                _walk(nodes, nodes[props[key]], sub, at, out)
            elif "m" in node:
                _walk(nodes, nodes[node["m"]], sub, at, out)
            elif not node.get("x") and (props or letter == "o"):
                out.append((at, f"unknown field {key!r}; {_known(str(key), props)}"))
    elif isinstance(value, list) and "i" in node:
        item = nodes[node["i"]]
        for i, sub in enumerate(value):
            _walk(nodes, item, sub, f"{path}[{i}]", out)
