"""Generate the WorkloadRun field reference (``docs/workloadrun-reference.md``) from the models.

``python -m krm_fn.api.reference > docs/workloadrun-reference.md`` writes it; a test checks
that the committed file is exactly what this module generates, so it cannot drift.

Invariants:
    * Everything in a row comes from the field itself: its input name, type, constraints,
      required-ness and default from the model, its meaning and example from its
      ``Field(description=..., examples=...)`` (the same text the CRD carries). A documented
      field without a description is an error (:class:`MissingDocs`), never an empty cell.
    * Every NVCRE model reachable from ``WorkloadRun`` gets a section, in the order a reader
      meets it (depth first, declaration order), then NVCRE's job template (what
      ``jobTemplate`` and ``jobTemplatePatch`` patch), then the function's options; the
      core/v1 types (:data:`krm_fn.api.corev1.DOCS`) are linked, not expanded.
    * Deterministic: the same models give the same bytes.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel

from krm_fn.api.config import CONFIG_API_VERSION, CONFIG_KIND, FunctionOptions
from krm_fn.api.corev1 import DOCS
from krm_fn.api.fields import FieldView, fields_of, nested_models
from krm_fn.api.models import API_VERSION, JobTemplate, WorkloadRun


class MissingDocs(ValueError):
    """Documented fields without a ``Field(description=...)``."""


def _models(root: type[BaseModel], seen: set[type[BaseModel]]) -> dict[type[BaseModel], list[str]]:
    """Every documented model under ``root`` not in ``seen`` (depth first), with its paths."""
    found: dict[type[BaseModel], list[str]] = {}

    def walk(model: type[BaseModel], path: str) -> None:
        if model.__name__ in DOCS or (model in seen and model not in found):
            return
        if model in found:
            found[model].append(path)
            return
        found[model] = [path]
        for f in fields_of(model):
            for sub, suffix in nested_models(f.annotation):
                walk(sub, f"{path}.{f.key}{suffix}" if path else f.key + suffix)

    walk(root, "")
    seen.update(found)
    return found


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
        return "object (free-form)" if value is Any else f"map of string to {type_text(value)}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        url = DOCS.get(tp.__name__)
        return f"[{tp.__name__}]({url}) (Kubernetes)" if url else f"[{tp.__name__}](#{_anchor(tp)})"
    if tp is Any:
        return "any"
    name = {str: "string", int: "integer", bool: "boolean"}.get(tp, getattr(tp, "__name__", "?"))
    bounds = _bounds(spec) if spec else []
    return f"{name} ({', '.join(bounds)})" if bounds else name


def _bounds(spec: FieldView) -> list[str]:
    bounds = []
    if spec.ge is not None and spec.le is not None:
        bounds.append(f"{spec.ge}–{spec.le}")
    elif spec.ge is not None:
        bounds.append(f"≥ {spec.ge}")
    elif spec.le is not None:
        bounds.append(f"≤ {spec.le}")
    lo, hi = spec.min_length, spec.max_length
    if lo == 1 and hi is None:
        bounds.append("non-empty")
    elif lo is not None and hi is not None:
        bounds.append(f"{lo}–{hi} characters")
    elif lo is not None or hi is not None:
        bounds.append(f"≤ {hi} characters" if hi is not None else f"≥ {lo} characters")
    return bounds


def default_text(spec: FieldView) -> str:
    """The default column: required, the model's default, or unset."""
    if spec.required:
        return "**required**"
    if callable(spec.default_factory):  # the "no factory" sentinel is not callable
        return f"`{json.dumps(spec.default_factory())}`"
    if spec.default is not None:
        value = spec.default
        return f"`{str(value).lower() if isinstance(value, bool) else value}`"
    return "unset"


def example_yaml(key: str, value: Any) -> str:
    """``key: value`` in YAML flow style, on one line: how an example is shown and rendered."""
    import yaml

    return yaml.safe_dump({key: value}, default_flow_style=True, width=10**6)[1:-2]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(model: type[BaseModel]) -> list[str]:
    rows = ["| field | type | default | description | example |", "|---|---|---|---|---|"]
    for f in fields_of(model):
        example = f"`{example_yaml(f.key, f.examples[0])}`" if f.examples else ""
        cells = (f"`{f.key}`", type_text(f.annotation, f), default_text(f), f.description or "")
        rows.append("| " + " | ".join(_cell(c) for c in (*cells, example)) + " |")
    return rows


def documented_models() -> list[type[BaseModel]]:
    """The models the reference describes field by field, in the reference's order."""
    seen: set[type[BaseModel]] = set()
    return [*_models(WorkloadRun, seen), *_models(JobTemplate, seen), FunctionOptions]


def reference() -> str:
    """The Markdown reference; :class:`MissingDocs` when a documented field has no description."""
    seen: set[type[BaseModel]] = set()
    run, template = _models(WorkloadRun, seen), _models(JobTemplate, seen)
    missing = [
        f"{m.__name__}.{f.key}"
        for m in documented_models()
        for f in fields_of(m)
        if not f.description
    ]
    if missing:
        raise MissingDocs("fields without a Field(description=...): " + ", ".join(missing))
    return "\n".join(
        [
            *_PREAMBLE.split("\n"),
            *_sections(run, ""),
            *_TEMPLATE_INTRO.split("\n"),
            *_sections(template, "jobTemplate."),
            *_OPTIONS_INTRO.split("\n"),
            *_table(FunctionOptions),
            "",
        ]
    )


_PREAMBLE = f"""# WorkloadRun field reference

<!-- Generated by `python -m krm_fn.api.reference > docs/workloadrun-reference.md`
     from the models' Field(description=..., examples=...) in krm_fn/api/models.py
     and krm_fn/api/config.py; tests/test_reference.py fails when this file differs
     and renders every example. Do not edit by hand. -->

Every field of a `{API_VERSION}` `WorkloadRun`, with its type, default, meaning and
an example, then NVCRE's job template (what overrides patch) and the function's own
options. Unknown fields are errors; types are strict (`numNodes: "4"` is refused).
`workloadrun-fn schema` prints the same text as a CustomResourceDefinition (for
`kubectl explain workloadrun.spec.numNodes`).

A minimal WorkloadRun (the three required `spec` fields, with the MPI framework's
two required fields):

```yaml
apiVersion: {API_VERSION}
kind: WorkloadRun
metadata:
  name: my-workload
spec:
  image: nvcr.io/nvidia/pytorch:24.09-py3
  numNodes: 2
  framework:
    mpi:
      binary: /usr/bin/all_reduce_perf
      mpirunPath: /usr/local/mpi/bin/mpirun
```

Types marked (Kubernetes) are the core/v1 types, written as in a Pod.
"""
"""The page title, the generated-file notice and a minimal WorkloadRun."""

_TEMPLATE_INTRO = """## NVCRE's job template

`spec.overrides[].jobTemplate` (a strategic merge patch) and `jobTemplatePatch` (RFC 6902
operations, paths such as `/spec/workload/trainJob/trainer/env`) patch NVCRE's job
template of every TrainJob, not the TrainJob itself: its `spec.workload.trainJob` is the
TrainJob's `spec`, its `spec.workloadMetadata.labels` the TrainJob's labels. The result is
checked against these models and the pinned TrainJob CRD, then mapped back.
"""

_OPTIONS_INTRO = f"""<a id="{_anchor(FunctionOptions)}"></a>

## Function options (FunctionOptions)

The `spec` of a `{CONFIG_API_VERSION}` `{CONFIG_KIND}` functionConfig, the `data` of
a `ConfigMap` functionConfig (string values: `"true"`, comma-separated lists), or, in
kustomize generator mode, annotations `fn.nvcre.nvidia.com/<option>` on the WorkloadRun.
"""


def _sections(found: dict[type[BaseModel], list[str]], prefix: str) -> list[str]:
    """One anchored section per model: title (its paths), its docstring, its table."""
    out: list[str] = []
    for model, paths in found.items():
        title = ", ".join(f"`{prefix}{p}`" for p in paths) if paths != [""] else "`WorkloadRun`"
        if paths == [""] and prefix:
            title = f"`{prefix.rstrip('.')}`"
        out += [f'<a id="{_anchor(model)}"></a>', "", f"## {title} ({model.__name__})", ""]
        if model.__doc__:
            out += [" ".join(model.__doc__.split()).replace("``", "`"), ""]
        out += [*_table(model), ""]
    return out


if __name__ == "__main__":
    import sys

    sys.stdout.write(reference())
