"""The fields of a pydantic model as the CRD generator, the field reference and the hints read them.

A typed view of pydantic's ``model_fields`` (:class:`pydantic.fields.FieldInfo`): the input
key (the alias, else the Python name), the evaluated annotation, whether it is required, its
default, the constraints pydantic keeps in ``FieldInfo.metadata`` (``annotated_types``'
``MinLen``, ``MaxLen``, ``Ge``, ``Le``), and the field's own text (``description``,
``examples``), the one home of what a field means.

Invariants:
    * Fields come in declaration order (base classes first), as in ``model_fields``.
    * A constraint given to ``Field`` applies to the non-``None`` part of the annotation.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

__all__ = ["FieldView", "fields_of", "iter_models", "model_at", "nested_models"]


@dataclass(frozen=True, slots=True)
class FieldView:
    """One field of a model, read from its ``FieldInfo``."""

    name: str
    key: str
    annotation: Any
    required: bool
    default: Any
    default_factory: Callable[[], Any] | None
    min_length: int | None
    max_length: int | None
    ge: int | None
    le: int | None
    description: str | None = None
    examples: list[Any] | None = None


def _constraint(metadata: list[Any], name: str) -> Any:
    return next((v for item in metadata if (v := getattr(item, name, None)) is not None), None)


def fields_of(model: type[BaseModel]) -> list[FieldView]:
    """The fields of ``model``, in declaration order."""
    out = []
    for name, info in model.model_fields.items():
        required = info.is_required()
        factory = info.default_factory
        out.append(
            FieldView(
                name=name,
                key=info.alias or name,
                annotation=info.annotation,
                required=required,
                default=None if required or factory is not None else info.default,
                default_factory=factory,  # type: ignore[arg-type]
                min_length=_constraint(info.metadata, "min_length"),
                max_length=_constraint(info.metadata, "max_length"),
                ge=_constraint(info.metadata, "ge"),
                le=_constraint(info.metadata, "le"),
                description=info.description,
                examples=info.examples,
            )
        )
    return out


def nested_models(tp: Any, suffix: str = "") -> Iterator[tuple[type[BaseModel], str]]:
    """Each model in annotation ``tp`` with its path suffix (``[]`` list item, ``.*`` map value)."""
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        yield tp, suffix
    elif origin is list or origin is dict:
        yield from nested_models(
            typing.get_args(tp)[-1], suffix + (".*" if origin is dict else "[]")
        )
    else:
        for arg in typing.get_args(tp):  # a union
            yield from nested_models(arg, suffix)


def iter_models(tp: Any) -> Iterator[type[BaseModel]]:
    """The pydantic model classes named in annotation ``tp``, in order."""
    return (model for model, _ in nested_models(tp))


def model_at(root: type[BaseModel], loc: Sequence[int | str]) -> type[BaseModel] | None:
    """The model under ``root`` that holds the last field of ``loc`` (``None``: not a model).

    A part that names no field (a list index, a mapping key) stays in the model it indexes.
    """
    model = root
    for part in loc[:-1]:
        f = next((f for f in fields_of(model) if part in (f.key, f.name)), None)
        sub = next(iter_models(f.annotation), None) if f is not None else model
        if sub is None:
            return None
        model = sub
    return model
