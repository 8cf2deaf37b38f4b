"""Kubernetes strategic-merge patch (SMP) for the object kinds workloadrun-fn generates.

The one job of this module is :func:`strategic_merge`: merge a partial object (a patch) into a
generated object the way ``kubectl patch --type strategic`` would, using the merge keys of the
Go structs behind TrainingRuntime/JobSet, TrainJob and core v1 (see trainer-api.md §5).

Invariants:
    * Inputs are never mutated; the result shares no mutable value with ``base`` or ``patch``.
    * Maps merge recursively; a ``null`` patch value deletes the key.
    * Lists that have merge keys (:func:`merge_keys`, derived from the pinned CRDs'
      ``x-kubernetes-list-map-keys`` and the core types' ``x-kubernetes-patch-merge-key``,
      so ``hostAliases`` by ``ip``, ``topologySpreadConstraints`` by ``topologyKey``,
      ``volumeDevices`` by ``devicePath``, ``dependsOn`` by ``name``, ...) merge item by item
      on those keys: matched items merge in place (base order is kept), unmatched items are
      appended in patch order (``kubectl`` puts them first; the set of items is the same).
      Every other list (``tolerations``, ``args``, ``command``, ``nodeSelectorTerms``,
      ``matchExpressions``, ...) is replaced wholesale and copied verbatim.
    * Per kind, some paths are atomic even though their field name merges elsewhere:
      a TrainJob's ``spec.trainer.env`` is replaced, as NVCRE does (:data:`ATOMIC_PATHS`).
    * NVCRE's job template (kind :data:`JOB_TEMPLATE`) merges its ``spec.workload.trainJob``
      with the TrainJob's keys and atomic paths, and every other list of it whole.
    * Directives: ``$patch: replace`` (on a map or a keyed list item: replace instead of merge;
      as a lone ``{"$patch": "replace"}`` list item: replace the whole list with the other
      items), ``$patch: delete`` (on a keyed list item: delete the base item with that key; on a
      map value: delete that key), ``$patch: merge`` (the default) and ``$retainKeys`` (keep
      only the listed keys of the merged map). ``$setElementOrder/<field>`` is accepted and
      ignored: merged lists always keep the base order. Any other ``$`` key is an error.
    * Kinds outside :data:`STRATEGIC_KINDS` merge as plain JSON merge patch (RFC 7386): maps
      recurse, ``null`` deletes, lists are replaced, and SMP directives are an error.
    * A patch item of a merge-keyed list without its key raises :class:`SMPError` naming the
      path, e.g. ``spec.template.spec.replicatedJobs[name=node].template.spec.template.spec
      .containers[0]: list item has no 'name'``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from krm_fn.api.mergekeys import load_table


def merge_keys(kind: str | None, path: Sequence[str]) -> list[str] | None:
    """The fields the items of the list at ``path`` (from the root) merge on, or ``None``.

    From the table derived from the pinned CRDs (:mod:`krm_fn.api.mergekeys`): by field path
    for a kind it covers, else (a ConfigMap, a fragment) by the list's field name.
    """
    if kind == JOB_TEMPLATE:  # NVCRE's job template: its TrainJob sits at spec.workload.trainJob
        fields = _field_path(tuple(path))
        inside = fields[: len(TRAINJOB_AT)] == TRAINJOB_AT
        return merge_keys("TrainJob", ("spec", *fields[len(TRAINJOB_AT) :])) if inside else None
    table = load_table()
    by_path: Mapping[str, list[str]] | None = table["kinds"].get(kind or "")
    if by_path is not None:
        return by_path.get(".".join(_field_path(tuple(path))))
    keys: list[str] | None = table["fields"].get(path[-1] if path else "")
    return keys


JOB_TEMPLATE: Final = "JobTemplate"
"""NVCRE's job template of a TrainJob (:mod:`~krm_fn.overrides.jobtemplate`), merged as one."""
TRAINJOB_AT: Final = ("spec", "workload", "trainJob")

STRATEGIC_KINDS: Final[frozenset[str]] = frozenset({
    JOB_TEMPLATE, "TrainingRuntime", "ClusterTrainingRuntime", "TrainJob", "ConfigMap", "Secret",
    "PersistentVolumeClaim",
})  # fmt: skip
"""Kinds merged with SMP; any other kind is merged as plain JSON merge patch."""

ATOMIC_PATHS: Final[Mapping[str, frozenset[tuple[str, ...]]]] = {
    "TrainJob": frozenset({("spec", "trainer", "env"), ("spec", "trainer", "args")}),
    JOB_TEMPLATE: frozenset({(*TRAINJOB_AT, "trainer", "env"), (*TRAINJOB_AT, "trainer", "args")}),
}
"""Per kind, field paths (list positions left out) replaced wholesale despite their name."""

_PATCH = "$patch"
_RETAIN_KEYS = "$retainKeys"
_SET_ELEMENT_ORDER = "$setElementOrder/"


class SMPError(ValueError):
    """A patch that cannot be merged: ``reason`` (what is wrong) at ``path`` (segments)."""

    def __init__(self, path: Sequence[str], reason: str) -> None:
        self.path: tuple[str, ...] = tuple(path)
        self.reason = reason
        super().__init__(f"{dotted(self.path)}: {reason}" if self.path else reason)


@dataclass(frozen=True, slots=True)
class _Rules:
    strategic: bool
    kind: str | None
    atomic: frozenset[tuple[str, ...]]


class _Delete:
    """Marker returned for a map carrying ``$patch: delete``."""


_DELETE: Final = _Delete()


def dotted(path: Sequence[str]) -> str:
    """``("spec", "replicatedJobs", "[name=node]", "template")`` → ``spec.replicatedJobs[name=node].template``."""
    return "".join(s if s.startswith("[") or not i else "." + s for i, s in enumerate(path))


def strategic_merge(
    base: Any, patch: Any, path: tuple[str, ...] = (), *, kind: str | None = None
) -> Any:
    """Strategic-merge ``patch`` into ``base`` (at ``path``) and return a new object.

    ``kind`` selects the rules; by default it is ``base``'s (else ``patch``'s) ``kind``, and a
    fragment without one merges with SMP. :class:`SMPError`: an unknown or misplaced
    directive, a merge-keyed list item without its key, or ``$patch: delete`` on the root.
    """
    if kind is None:
        for candidate in (base, patch):
            if isinstance(candidate, Mapping) and isinstance(candidate.get("kind"), str):
                kind = candidate["kind"]
                break
    rules = _Rules(
        strategic=kind is None or kind in STRATEGIC_KINDS,
        kind=kind,
        atomic=ATOMIC_PATHS.get(kind or "", frozenset()),
    )
    merged = _merge(base, patch, tuple(path), rules)
    if merged is _DELETE:
        raise SMPError(path, "'$patch: delete' cannot delete the object being patched")
    return merged


def _field_path(path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(seg for seg in path if not seg.startswith("["))


def _merge(base: Any, patch: Any, path: tuple[str, ...], rules: _Rules) -> Any:
    if isinstance(patch, Mapping):
        return _merge_map(base if isinstance(base, Mapping) else {}, patch, path, rules)
    keys = merge_keys(rules.kind, path) if isinstance(patch, list) and rules.strategic else None
    if keys and _field_path(path) not in rules.atomic:
        return _merge_keyed_list(base if isinstance(base, list) else [], patch, path, keys, rules)
    return copy.deepcopy(patch)


def _directive(patch: Mapping[str, Any], path: tuple[str, ...], rules: _Rules) -> str:
    for k in patch:
        if isinstance(k, str) and k.startswith("$"):
            if not rules.strategic:
                raise SMPError(
                    (*path, k),
                    f"SMP directives are not supported for kind {rules.kind}: "
                    "it is merged as a plain JSON merge patch (RFC 7386)",
                )
            if k not in (_PATCH, _RETAIN_KEYS) and not k.startswith(_SET_ELEMENT_ORDER):
                raise SMPError((*path, k), f"unsupported patch directive {k!r}")
    value = patch.get(_PATCH, "merge")
    if value not in ("merge", "replace", "delete"):
        raise SMPError(
            (*path, _PATCH), f"unknown $patch value {value!r}; expected merge, replace or delete"
        )
    return str(value)


def _merge_map(
    base: Mapping[str, Any], patch: Mapping[str, Any], path: tuple[str, ...], rules: _Rules
) -> Any:
    directive = _directive(patch, path, rules)
    if directive == "delete":
        return _DELETE
    if directive == "replace":
        base = {}
    retain = patch.get(_RETAIN_KEYS)
    if retain is not None and (
        not isinstance(retain, list) or not all(isinstance(k, str) for k in retain)
    ):
        raise SMPError((*path, _RETAIN_KEYS), "$retainKeys must be a list of field names")

    # Base keys keep their position (a patched key is overwritten in place, a deleted one
    # dropped); keys new to the map follow in patch order.
    result: dict[str, Any] = {}
    for k, v in base.items():
        patched = k in patch and not (isinstance(k, str) and k.startswith("$"))
        result[k] = v if patched else copy.deepcopy(v)
    for k, pv in patch.items():
        if isinstance(k, str) and k.startswith("$"):
            continue
        if pv is None:
            result.pop(k, None)
            continue
        child = (*path, str(k))
        if _field_path(child) in rules.atomic:
            merged = copy.deepcopy(pv)
        else:
            merged = _merge(base.get(k), pv, child, rules)
        if merged is _DELETE:
            result.pop(k, None)
        else:
            result[k] = merged
    if retain is not None:
        keep = set(retain)
        result = {k: v for k, v in result.items() if k in keep}
    return result


def _merge_keyed_list(
    base: list[Any], patch: list[Any], path: tuple[str, ...], keys: list[str], rules: _Rules
) -> list[Any]:
    def identity(x: Any) -> tuple[Any, ...] | None:
        return tuple(x.get(k) for k in keys) if isinstance(x, Mapping) else None

    items: list[tuple[str, Mapping[str, Any]]] = []
    replace_all = False
    for i, item in enumerate(patch):
        where = (*path, f"[{i}]")
        if not isinstance(item, Mapping):
            raise SMPError(where, f"list item must be a map with a {keys[0]!r} field")
        if _PATCH in item and set(item) == {_PATCH}:
            if _directive(item, where, rules) != "replace":
                raise SMPError(where, f"list item has no {keys[0]!r}")
            replace_all = True
            continue
        if missing := [k for k in keys if item.get(k) is None]:
            raise SMPError(where, f"list item has no {missing[0]!r}")
        items.append(("[" + ",".join(f"{k}={item[k]}" for k in keys) + "]", item))

    result: list[Any] = [] if replace_all else [copy.deepcopy(x) for x in base]
    for seg, item in items:
        value = identity(item)
        where = (*path, seg)
        found = next((n for n, x in enumerate(result) if identity(x) == value), None)
        directive = _directive(item, where, rules)
        if directive == "delete":
            result = [x for x in result if identity(x) != value]
            continue
        target = result[found] if found is not None and directive == "merge" else {}
        merged = _merge_map(target, item, where, rules)
        if found is None:
            result.append(merged)
        else:
            result[found] = merged
    return result
