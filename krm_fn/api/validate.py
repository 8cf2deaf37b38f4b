"""Turn a raw ``WorkloadRun`` mapping into the typed model, reporting every problem at once.

Invariants:
    * Every validation error (pydantic's, with its error types) becomes
      one result with the object's reference, the field path in ``spec.env[0].name`` form,
      the offending value (shortened) and what is allowed.
    * Unknown fields are errors with a "did you mean" hint when a known field is close.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from krm_fn.api import models
from krm_fn.api.fields import fields_of, iter_models
from krm_fn.io.results import FileRef, ResourceRef, Results


def field_path(loc: Sequence[int | str]) -> str:
    """``('spec', 'env', 0, 'name')`` → ``spec.env[0].name``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def _known_fields() -> dict[str, list[str]]:
    """Every field name of the WorkloadRun API → the paths where it is defined."""
    where: dict[str, list[str]] = {}

    def walk(m: type[BaseModel], prefix: str, depth: int) -> None:
        if depth > 6:
            return
        for f in fields_of(m):
            alias = f.key
            path = f"{prefix}.{alias}" if prefix else alias
            where.setdefault(alias, []).append(path)
            for sub in iter_models(f.annotation):
                walk(sub, path, depth + 1)

    walk(models.WorkloadRun, "", 0)
    return where


_KNOWN: dict[str, list[str]] | None = None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_workloadrun(
    obj: dict[str, Any], results: Results, file: FileRef | None
) -> models.WorkloadRun | None:
    """Validate one WorkloadRun; on failure record results and return ``None``."""
    global _KNOWN
    ref = ResourceRef.of(obj)
    try:
        return models.WorkloadRun.model_validate(obj)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc = err["loc"]
            path = field_path(loc)
            kind = err["type"]
            if kind == "extra_forbidden":
                if _KNOWN is None:
                    _KNOWN = _known_fields()
                leaf = str(loc[-1]) if loc else ""
                parent = field_path(loc[:-1])
                if leaf in _KNOWN:
                    homes = ", ".join(p for p in _KNOWN[leaf] if p != path)
                    hint = f"; {leaf!r} belongs under {homes}" if homes else ""
                    msg = f"unknown field {leaf!r} in {parent or 'the object'}{hint}"
                else:
                    import difflib  # only unknown-field errors need it

                    close = difflib.get_close_matches(leaf, list(_KNOWN), n=1, cutoff=0.75)
                    hint = f"; did you mean {close[0]!r}?" if close else ""
                    msg = f"unknown field {leaf!r}: not part of the WorkloadRun API{hint}"
            elif kind == "missing":
                msg = "required field is missing"
            elif kind == "literal_error":
                allowed = err.get("ctx", {}).get("expected", "")
                msg = f"value {_short(err.get('input'))} is not allowed; expected {allowed}"
            elif kind == "value_error":
                msg = err["msg"].removeprefix("Value error, ")
            else:
                got = err.get("input")
                msg = f"{err['msg']}; got {type(got).__name__} {_short(got)}"
            results.error(msg, resource=ref, field_path=path or None, file=file)
        return None
