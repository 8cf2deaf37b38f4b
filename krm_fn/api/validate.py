"""Turn a raw ``WorkloadRun`` mapping into the typed model, reporting every problem at once.

Invariants:
    * Every validation error (pydantic's, with its error types) becomes
      one result with the object's reference, the field path in ``spec.env[0].name`` form,
      the offending value (shortened) and what is allowed.
    * Unknown fields are errors with a "did you mean" hint when a known field is close.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from krm_fn.api import models
from krm_fn.api.fields import fields_of, iter_models
from krm_fn.io.results import FileRef, ResourceRef, Results

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails


def field_path(loc: Sequence[int | str], maps: Collection[str] = ()) -> str:
    """``('spec', 'env', 0, 'name')`` → ``spec.env[0].name`` (a key of ``maps``: ``[key]``)."""
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif i and loc[i - 1] in maps:
            out += f"[{part!r}]"
        else:
            out += ("." if out else "") + part
    return out


@functools.cache
def _known_fields() -> dict[str, list[str]]:
    """Every field name of the WorkloadRun API → the paths where it is defined."""
    where: dict[str, list[str]] = {}

    def walk(m: type[BaseModel], prefix: str, depth: int) -> None:
        if depth > 6:
            return
        for f in fields_of(m):
            path = f"{prefix}.{f.key}" if prefix else f.key
            where.setdefault(f.key, []).append(path)
            for sub in iter_models(f.annotation):
                walk(sub, path, depth + 1)

    walk(models.WorkloadRun, "", 0)
    return where


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_MISSING_HINTS = {"when": " (`when: {}` applies the override to every run)"}
"""What to write for a required field, where the field's name does not say it."""


def error_message(err: ErrorDetails, unknown_field: Callable[[tuple[int | str, ...]], str]) -> str:
    """One pydantic error as the sentence a user reads: what is wrong, the value, what is allowed.

    Shared by every pydantic model of user input (the WorkloadRun here, the platform catalog
    file in :mod:`krm_fn.platforms.catalog_file`), so they word their errors alike; the field
    path is not part of it. ``unknown_field`` words an ``extra_forbidden`` error from its
    location (each model knows its own fields and where a misplaced one belongs).
    """
    kind = err["type"]
    if kind == "extra_forbidden":
        return unknown_field(tuple(err["loc"]))
    if kind == "missing":
        return "required field is missing" + _MISSING_HINTS.get(str(err["loc"][-1]), "")
    if kind == "literal_error":
        allowed = err.get("ctx", {}).get("expected", "")
        return f"value {_short(err.get('input'))} is not allowed; expected {allowed}"
    if kind == "value_error":
        return err["msg"].removeprefix("Value error, ")
    got = err.get("input")
    return f"{err['msg']}; got {type(got).__name__} {_short(got)}"


def _unknown_workloadrun_field(loc: tuple[int | str, ...]) -> str:
    known = _known_fields()
    path = field_path(loc)
    leaf = str(loc[-1]) if loc else ""
    parent = field_path(loc[:-1])
    if leaf in known:
        homes = ", ".join(p for p in known[leaf] if p != path)
        hint = f"; {leaf!r} belongs under {homes}" if homes else ""
        return f"unknown field {leaf!r} in {parent or 'the object'}{hint}"
    import difflib  # only unknown-field errors need it

    close = difflib.get_close_matches(leaf, list(known), n=1, cutoff=0.75)
    at = re.sub(r"\[\d+\]", "", parent)  # the fields under it, wherever in a list it is
    here = sorted(k for k, paths in known.items() if f"{at}.{k}" in paths)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    hint = hint or (f"; {parent} takes {', '.join(here)}" if here else "")
    return f"unknown field {leaf!r}: not part of the WorkloadRun API{hint}"


def parse_workloadrun(
    obj: dict[str, Any], results: Results, file: FileRef | None
) -> models.WorkloadRun | None:
    """Validate one WorkloadRun; on failure record results and return ``None``."""
    ref = ResourceRef.of(obj)
    try:
        return models.WorkloadRun.model_validate(obj)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            msg = error_message(err, _unknown_workloadrun_field)
            path = field_path(err["loc"])
            results.error(msg, resource=ref, field_path=path or None, file=file)
        return None
