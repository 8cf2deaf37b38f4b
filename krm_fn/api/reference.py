"""Generate the WorkloadRun field reference (``docs/workloadrun-reference.md``) from the models.

``python -m krm_fn.api.reference > docs/workloadrun-reference.md`` writes it; a test checks
that the committed file is exactly what this module generates, so it cannot drift.

Invariants:
    * The list of fields, their input names, types, constraints, required-ness and defaults
      come from the models (:mod:`krm_fn.api.models`, :class:`FunctionOptions`); only the
      prose (meaning, example, what it renders to) comes from :data:`FIELD_DOCS`.
    * Every NVCRE model reachable from ``WorkloadRun`` gets a section, in the order a reader
      meets it (depth first, declaration order); Kubernetes types the WorkloadRun embeds
      unchanged (:data:`KUBERNETES_TYPES`) are linked, not expanded.
    * A field without an entry in :data:`FIELD_DOCS`, or an entry naming no field, is an error
      (:class:`MissingDocs`), never a silently empty cell.
    * Deterministic: the same models and table give the same bytes.
"""

from __future__ import annotations

import importlib
import json
import types
import typing
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel

from krm_fn.api.config import CONFIG_API_VERSION, CONFIG_KIND, FunctionOptions
from krm_fn.api.corev1 import DOCS as KUBERNETES_TYPES
from krm_fn.api.field_docs import FIELD_DOCS, FieldDoc
from krm_fn.api.fields import FieldView, fields_of
from krm_fn.api.models import API_VERSION, WorkloadRun


class MissingDocs(ValueError):
    """Fields without words in :data:`FIELD_DOCS`, or entries naming no field."""


def _models(root: type[BaseModel]) -> dict[type[BaseModel], list[str]]:
    """Every documented model under ``root`` (depth first) with every path it appears at."""
    found: dict[type[BaseModel], list[str]] = {}

    def walk(model: type[BaseModel], path: str) -> None:
        if model.__name__ in KUBERNETES_TYPES:
            return
        if model in found:
            found[model].append(path)
            return
        found[model] = [path]
        for f in fields_of(model):
            for sub, suffix in _nested(f.annotation):
                walk(sub, f"{path}.{f.key}{suffix}" if path else f.key + suffix)

    walk(root, "")
    return found


def _nested(tp: Any, suffix: str = "") -> Iterator[tuple[type[BaseModel], str]]:
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        for a in typing.get_args(tp):
            yield from _nested(a, suffix)
    elif origin is list:
        yield from _nested(typing.get_args(tp)[0], suffix + "[]")
    elif origin is dict:
        yield from _nested(typing.get_args(tp)[1], suffix + ".*")
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        yield tp, suffix


def _anchor(model: type[BaseModel]) -> str:
    return model.__name__.lower()


def type_text(tp: Any, spec: FieldView | None = None) -> str:
    """A reader's name for annotation ``tp`` with the field's constraints."""
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        alts = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(alts) == 1:
            return type_text(alts[0], spec)
        return " or ".join(type_text(a) for a in alts)
    if origin is Literal:
        values = [f"`{v}`" for v in typing.get_args(tp)]
        return values[0] if len(values) == 1 else "one of " + ", ".join(values)
    if origin is list:
        inner = type_text(typing.get_args(tp)[0])
        bound = f", at least {spec.min_length}" if spec and spec.min_length else ""
        return f"list of {inner}{bound}"
    if origin is dict:
        value = typing.get_args(tp)[1]
        if value is Any:
            return "object (free-form)"
        return f"map of string to {type_text(value)}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        url = KUBERNETES_TYPES.get(tp.__name__)
        if url:
            return f"[{tp.__name__}]({url}) (Kubernetes)"
        return f"[{tp.__name__}](#{_anchor(tp)})"
    if tp is Any:
        return "any"
    name = {str: "string", int: "integer", bool: "boolean"}.get(tp, getattr(tp, "__name__", "?"))
    if spec is None:
        return name
    bounds = []
    if spec.ge is not None and spec.le is not None:
        bounds.append(f"{spec.ge}–{spec.le}")
    elif spec.ge is not None:
        bounds.append(f"≥ {spec.ge}")
    elif spec.le is not None:
        bounds.append(f"≤ {spec.le}")
    if spec.min_length == 1 and spec.max_length is None:
        bounds.append("non-empty")
    elif spec.min_length is not None or spec.max_length is not None:
        lo, hi = spec.min_length, spec.max_length
        if lo is not None and hi is not None:
            bounds.append(f"{lo}–{hi} characters")
        else:
            bounds.append(f"≤ {hi} characters" if hi is not None else f"≥ {lo} characters")
    return f"{name} ({', '.join(bounds)})" if bounds else name


def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def default_text(spec: FieldView, doc: FieldDoc) -> str:
    """The default column: required, the model's default, or what the render fills in."""
    if spec.required:
        return "**required**"
    if callable(spec.default_factory):  # the "no factory" sentinel is not callable
        return f"`{json.dumps(spec.default_factory())}`"
    if spec.default is not None:
        value = spec.default
        return f"`{str(value).lower() if isinstance(value, bool) else value}`"
    if doc.default is not None:
        value = _resolve(doc.default_from) if doc.default_from else ""
        return doc.default.format(value=value)
    return "unset"


def _values(doc: FieldDoc) -> str:
    if doc.values_from is None:
        return ""
    return ", one of " + ", ".join(f"`{v}`" for v in _resolve(doc.values_from))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(model: type[BaseModel], docs: dict[str, FieldDoc], used: set[str]) -> list[str]:
    rows = [
        "| field | type | default | example | renders to |",
        "|---|---|---|---|---|",
    ]
    for f in fields_of(model):
        key = f"{model.__name__}.{f.key}"
        doc = docs[key]
        used.add(key)
        rows.append(
            "| "
            + " | ".join(
                _cell(c)
                for c in (
                    f"`{f.key}`",
                    f"{type_text(f.annotation, f)}{_values(doc)}. {doc.description}",
                    default_text(f, doc),
                    f"`{doc.example}`",
                    doc.renders,
                )
            )
            + " |"
        )
    return rows


def _check(models: list[type[BaseModel]], docs: dict[str, FieldDoc]) -> None:
    wanted = {f"{m.__name__}.{f.key}" for m in models for f in fields_of(m)}
    missing = sorted(wanted - set(docs))
    stale = sorted(set(docs) - wanted)
    problems = []
    if missing:
        problems.append("fields without an entry in FIELD_DOCS: " + ", ".join(missing))
    if stale:
        problems.append("FIELD_DOCS entries naming no field: " + ", ".join(stale))
    if problems:
        raise MissingDocs("; ".join(problems))


def documented_models() -> list[type[BaseModel]]:
    """The models the reference describes field by field (WorkloadRun's, then the options)."""
    return [*_models(WorkloadRun), FunctionOptions]


def reference(docs: dict[str, FieldDoc] | None = None) -> str:
    """The Markdown reference.

    Raises:
        MissingDocs: A field has no words in ``docs`` or an entry names no field.

    """
    docs = FIELD_DOCS if docs is None else docs
    found = _models(WorkloadRun)
    _check([*found, FunctionOptions], docs)
    used: set[str] = set()
    out = [
        *_preamble(),
        *_model_sections(found, docs, used),
        *_options_section(docs, used),
    ]
    return "\n".join(out)


def _preamble() -> list[str]:
    """The page title, the generated-file notice and a minimal WorkloadRun, as lines.

    Returns:
        The Markdown lines that open the reference, ending with a blank line.

    """
    return [
        "# WorkloadRun field reference",
        "",
        "<!-- Generated by `python -m krm_fn.api.reference > docs/workloadrun-reference.md`",
        "     from krm_fn/api/models.py, krm_fn/api/config.py and krm_fn/api/field_docs.py;",
        "     tests/test_reference.py fails when this file differs. Do not edit by hand. -->",
        "",
        f"Every field of a `{API_VERSION}` `WorkloadRun`, with its type, default, an example",
        "and what it renders to, followed by the function's own options. Unknown fields are",
        'errors; types are strict (`numNodes: "4"` is refused). `workloadrun-fn schema`',
        "prints the same model as a CustomResourceDefinition.",
        "",
        "A minimal WorkloadRun (the three required `spec` fields, with the MPI framework's",
        "two required fields):",
        "",
        "```yaml",
        f"apiVersion: {API_VERSION}",
        "kind: WorkloadRun",
        "metadata:",
        "  name: my-workload",
        "spec:",
        "  image: nvcr.io/nvidia/pytorch:24.09-py3",
        "  numNodes: 4",
        "  framework:",
        "    mpi:",
        "      binary: /usr/bin/all_reduce_perf",
        "      mpirunPath: /usr/local/mpi/bin/mpirun",
        "```",
        "",
        "Types marked (Kubernetes) are the core/v1 types, written as in a Pod.",
        "",
    ]


def _model_sections(
    found: dict[type[BaseModel], list[str]], docs: dict[str, FieldDoc], used: set[str]
) -> list[str]:
    """One anchored section per WorkloadRun model: title, the model's docstring, its table.

    Args:
        found: Every documented model with the paths it appears at, in reading order.
        docs: The prose per ``Model.field``.
        used: The ``Model.field`` keys written so far; extended in place.

    Returns:
        The sections' Markdown lines, each section ending with a blank line.

    """
    out: list[str] = []
    for model, paths in found.items():
        title = ", ".join(f"`{p}`" for p in paths) if paths != [""] else "`WorkloadRun`"
        out += [f'<a id="{_anchor(model)}"></a>', "", f"## {title} ({model.__name__})", ""]
        if model.__doc__:
            out += [" ".join(model.__doc__.split()).replace("``", "`"), ""]
        out += [*_table(model, docs, used), ""]
    return out


def _options_section(docs: dict[str, FieldDoc], used: set[str]) -> list[str]:
    """The function options' section: where they are written, then their table.

    Args:
        docs: The prose per ``Model.field``.
        used: The ``Model.field`` keys written so far; extended in place.

    Returns:
        The section's Markdown lines, ending with a blank line.

    """
    return [
        f'<a id="{_anchor(FunctionOptions)}"></a>',
        "",
        "## Function options (FunctionOptions)",
        "",
        f"The `spec` of a `{CONFIG_API_VERSION}` `{CONFIG_KIND}` functionConfig, the `data` of",
        'a `ConfigMap` functionConfig (string values: `"true"`, comma-separated lists), or, in',
        "kustomize generator mode, annotations `fn.nvcre.nvidia.com/<option>` on the WorkloadRun.",
        "",
        *_table(FunctionOptions, docs, used),
        "",
    ]


def main() -> None:
    """Print the reference to stdout."""
    import sys

    sys.stdout.write(reference())


if __name__ == "__main__":
    main()


__all__ = ["MissingDocs", "default_text", "documented_models", "reference", "type_text"]
