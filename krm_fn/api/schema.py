"""Declarative validation of the API models: pydantic's behaviour, for the subset we use.

Importing pydantic and building the ~40 models of :mod:`krm_fn.api` cost about a third of
the function's cold start. A :class:`Model` class costs microseconds to define: nothing is
generated or evaluated when the class statement runs; the first validation of a class reads
its annotations (strings, thanks to ``from __future__ import annotations``), evaluates them in
the defining module's namespace (with a cache per distinct text) and builds one small checker
closure per field.

Invariants:
    * What pydantic v2 does for the same declaration, with the same error dictionaries
      (``type``, ``loc``, ``msg``, ``input`` and ``ctx`` where pydantic has one) in the same
      order: fields in declaration order (base classes first), list items and mapping entries
      in input order (a key's error before its value's), nested models depth-first; then the
      unknown keys in input order (``invalid_key`` for a key that is not a string,
      ``extra_forbidden`` when ``extra="forbid"``); then the model validators.
    * Every problem is reported at once: a failing field does not stop the others.
    * A field's validators (:func:`field_validator`) run only when its type check passed, in
      definition order; the model validators (:func:`model_validator`, ``mode="after"``) run
      only when every field and key passed. A ``ValueError`` (or ``AssertionError``) they
      raise becomes a ``value_error`` (``assertion_error``) at the field or at the model.
    * ``strict=True`` never coerces: ``"4"`` is not an ``int``, ``True`` is not an ``int``,
      ``1`` is not a ``bool``; ``str`` subclasses become plain ``str``. ``strict=False``
      converts like pydantic's lax mode for ``str`` (bytes), ``bool`` (``"yes"``, ``0``...)
      and ``list`` (any iterable but a string, bytes or mapping).
    * Supported annotations: ``str``, ``int``, ``bool``, ``Any``, ``Literal`` of strings, a
      :class:`Model`, ``list[X]``, ``dict[str, X]``, ``X | None`` and ``str | int``; with
      ``strict=False`` only ``str``, ``bool``, ``Any``, ``Literal`` and ``list[str]``.
      Anything else is a ``TypeError`` when the class is first used, never a silent pass.
    * Constraints (``min_length``, ``max_length``, ``ge``, ``le``) apply to the non-``None``
      part of the annotation, as pydantic's ``Field`` does.
    * Instances are immutable (assignment raises :class:`FrozenInstanceError`); fields are
      plain attributes under their Python names, an input key is the alias (or, with
      ``populate_by_name=True``, the name when the alias is absent); ``extra="allow"``
      keeps the unknown keys, unvalidated, in :attr:`Model.model_extra`.
    * ``Model.model_fields`` lists the resolved fields (name, alias, evaluated annotation,
      constraints) in order: the unknown-field hints and the CRD are derived from it.
    * Validated containers are new objects (a ``list`` or ``dict`` of the input is copied
      one level, as pydantic does); values under ``Any`` are the input's objects.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Literal, TypeVar, dataclass_transform, overload

__all__ = [
    "FieldInfo",
    "FrozenInstanceError",
    "Model",
    "ValidationError",
    "field",
    "field_validator",
    "iter_models",
    "model_validator",
]

T = TypeVar("T")
F = TypeVar("F")
M = TypeVar("M", bound="Model")

Loc = tuple[int | str, ...]
ErrorDict = dict[str, Any]
Checker = Callable[[Any, Loc, list[ErrorDict]], Any]

_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()
_BAD: Any = type("_Invalid", (), {"__repr__": lambda self: "<invalid>"})()
"""What a checker returns after it recorded errors."""

_SCHEMA = "__model_schema__"
_VALIDATES = "__validates_fields__"
_MODEL_VALIDATOR = "__model_validator__"


class FrozenInstanceError(AttributeError):
    """Assignment to (or deletion of) an attribute of a model instance."""


class ValidationError(ValueError):
    """The input does not fit the model; :meth:`errors` lists every problem."""

    def __init__(self, title: str, errors: list[ErrorDict]) -> None:
        super().__init__(title, errors)
        self.title = title
        self._errors = errors

    def errors(self, *, include_url: bool = True) -> list[ErrorDict]:
        """The problems, as pydantic's ``ValidationError.errors()`` dictionaries (no URL)."""
        return [dict(e) for e in self._errors]

    def error_count(self) -> int:
        """How many problems there are."""
        return len(self._errors)

    def __str__(self) -> str:
        n = len(self._errors)
        lines = [f"{n} validation error{'' if n == 1 else 's'} for {self.title}"]
        for e in self._errors:
            lines.append(".".join(str(p) for p in e["loc"]) or self.title)
            got = e["input"]
            lines.append(
                f"  {e['msg']} [type={e['type']}, input_value={got!r}, "
                f"input_type={type(got).__name__}]"
            )
        return "\n".join(lines)


class FieldInfo:
    """One field: its declaration (:func:`field`) and, once resolved, its checker."""

    __slots__ = (
        "alias",
        "annotation",
        "check",
        "default",
        "default_factory",
        "ge",
        "le",
        "max_length",
        "min_length",
        "name",
        "repr",
        "validators",
    )

    def __init__(
        self,
        default: Any = _MISSING,
        default_factory: Callable[[], Any] | Any = _MISSING,
        alias: str | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        ge: int | None = None,
        le: int | None = None,
        repr: bool = True,
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.alias = alias
        self.min_length = min_length
        self.max_length = max_length
        self.ge = ge
        self.le = le
        self.repr = repr
        self.name = ""
        self.annotation: Any = None
        self.check: Checker | None = None
        self.validators: tuple[Callable[[Any], Any], ...] = ()

    @property
    def required(self) -> bool:
        """Whether the field has no default."""
        return self.default is _MISSING and self.default_factory is _MISSING

    @property
    def key(self) -> str:
        """The field's name in the input and in ``model_dump(by_alias=True)``."""
        return self.alias or self.name

    def _copy(self) -> FieldInfo:
        return FieldInfo(
            self.default,
            self.default_factory,
            self.alias,
            self.min_length,
            self.max_length,
            self.ge,
            self.le,
            self.repr,
        )


@overload
def field(
    *,
    default: T,
    alias: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    ge: int | None = None,
    le: int | None = None,
    repr: bool = True,
) -> T: ...
@overload
def field(
    *,
    default_factory: Callable[[], T],
    alias: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    ge: int | None = None,
    le: int | None = None,
    repr: bool = True,
) -> T: ...
@overload
def field(
    *,
    alias: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    ge: int | None = None,
    le: int | None = None,
    repr: bool = True,
) -> Any: ...
def field(
    *,
    default: Any = _MISSING,
    default_factory: Any = _MISSING,
    alias: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    ge: int | None = None,
    le: int | None = None,
    repr: bool = True,
) -> Any:
    """Declare a field's default, input name and constraints (pydantic's ``Field`` subset)."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("field() takes default or default_factory, not both")
    return FieldInfo(default, default_factory, alias, min_length, max_length, ge, le, repr)


def field_validator(*names: str) -> Callable[[F], F]:
    """Mark a classmethod ``(cls, value) -> value`` as a validator of the named fields."""

    def mark(fn: F) -> F:
        setattr(getattr(fn, "__func__", fn), _VALIDATES, names)
        return fn

    return mark


def model_validator(*, mode: Literal["after"]) -> Callable[[F], F]:
    """Mark a method ``(self) -> self`` to run once every field of the model is valid."""

    def mark(fn: F) -> F:
        setattr(fn, _MODEL_VALIDATOR, mode)
        return fn

    return mark


class _ModelFields:
    """``Model.model_fields``: the resolved fields of the class, by Python name."""

    def __get__(self, obj: object, owner: type[Model]) -> dict[str, FieldInfo]:
        return _schema(owner).by_name


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Model:
    """Base of the validated, immutable API objects.

    Class keywords (inherited by subclasses): ``extra`` (``"forbid"``, ``"allow"`` or
    ``"ignore"``), ``strict`` and ``populate_by_name``, as in pydantic's ``ConfigDict``.
    """

    __slots__ = ("__dict__", "_extra")

    __extra__: ClassVar[str] = "forbid"
    __strict__: ClassVar[bool] = True
    __by_name__: ClassVar[bool] = False

    _extra: dict[str, Any] | None

    model_fields: ClassVar[_ModelFields] = _ModelFields()

    def __init_subclass__(
        cls,
        *,
        extra: Literal["forbid", "allow", "ignore"] | None = None,
        strict: bool | None = None,
        populate_by_name: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if extra is not None:
            cls.__extra__ = extra
        if strict is not None:
            cls.__strict__ = strict
        if populate_by_name is not None:
            cls.__by_name__ = populate_by_name

    def __init__(self, **data: Any) -> None:
        done = type(self).model_validate(data)
        self.__dict__.update(done.__dict__)
        object.__setattr__(self, "_extra", done._extra)

    # --- pydantic's public surface ---------------------------------------------------------

    @classmethod
    def model_validate(cls: type[M], obj: Any) -> M:
        """Validate ``obj`` (a mapping, or an instance returned as is).

        Raises:
            ValidationError: With every problem found.

        """
        errors: list[ErrorDict] = []
        out = _model_checker(cls)(obj, (), errors)
        if out is _BAD:
            raise ValidationError(cls.__name__, errors)
        result: M = out
        return result

    @property
    def model_extra(self) -> dict[str, Any] | None:
        """The unknown keys kept by an ``extra="allow"`` model (``None`` otherwise)."""
        return self._extra

    def model_dump(self, *, by_alias: bool = False, exclude_none: bool = False) -> dict[str, Any]:
        """The fields (then the kept unknown keys) as plain mappings and lists."""
        out: dict[str, Any] = {}
        values = self.__dict__
        for f in _schema(type(self)).fields:
            v = values[f.name]
            if v is None and exclude_none:
                continue
            out[f.key if by_alias else f.name] = _dump(v, by_alias, exclude_none)
        for k, v in (self._extra or {}).items():
            if v is None and exclude_none:
                continue
            out[k] = _dump(v, by_alias, exclude_none)
        return out

    def model_copy(self: M, *, update: dict[str, Any] | None = None) -> M:
        """A shallow copy with ``update`` (field names → values, not validated) applied."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        extra = None if self._extra is None else dict(self._extra)
        names = _schema(type(self)).by_name
        for k, v in (update or {}).items():
            if k in names or extra is None:
                new.__dict__[k] = v
            else:
                extra[k] = v
        object.__setattr__(new, "_extra", extra)
        return new

    # --- object protocol -------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model) or other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__ and self._extra == other._extra

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__[f.name] for f in _schema(type(self)).fields))

    def __repr__(self) -> str:
        values = self.__dict__
        shown = [f"{f.name}={values[f.name]!r}" for f in _schema(type(self)).fields if f.repr]
        shown += [f"{k}={v!r}" for k, v in (self._extra or {}).items()]
        return f"{type(self).__name__}({', '.join(shown)})"

    def __getstate__(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        return self.__dict__, self._extra

    def __setstate__(self, state: tuple[dict[str, Any], dict[str, Any] | None]) -> None:
        values, extra = state
        self.__dict__.update(values)
        object.__setattr__(self, "_extra", extra)


def _dump(v: Any, by_alias: bool, exclude_none: bool) -> Any:
    if isinstance(v, Model):
        return v.model_dump(by_alias=by_alias, exclude_none=exclude_none)
    if isinstance(v, list | tuple):
        return [_dump(x, by_alias, exclude_none) for x in v]
    if isinstance(v, dict):
        return {k: _dump(x, by_alias, exclude_none) for k, x in v.items()}
    return v


# --- resolution ------------------------------------------------------------------------------


_Step = tuple[str, str | None, str, Any, Any, Checker, tuple[Callable[[Any], Any], ...]]
"""How a field is read: input key, input key by name (or None), attribute name, default,
default factory, checker, validators."""


class _Schema:
    """A model class's resolved fields, validators and lookup plan."""

    __slots__ = ("by_name", "fields", "model_validators", "plan")

    def __init__(
        self, fields: list[FieldInfo], model_validators: list[Callable[[Any], Any]]
    ) -> None:
        self.fields = fields
        self.by_name = {f.name: f for f in fields}
        self.model_validators = model_validators
        self.plan: list[_Step] = []


_EVALUATED: dict[tuple[str, str], Any] = {}


def _schema(cls: type[Model]) -> _Schema:
    found: _Schema | None = cls.__dict__.get(_SCHEMA)
    return found if found is not None else _resolve(cls)


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _evaluate(cls: type, annotation: Any) -> Any:
    if not isinstance(annotation, str):
        return annotation
    key = (cls.__module__, annotation)
    if key not in _EVALUATED:
        module = vars(sys.modules[cls.__module__])
        # The text is the class's own annotation, evaluated where the class was defined.
        _EVALUATED[key] = eval(annotation, module, {cls.__name__: cls})
    return _EVALUATED[key]


def _resolve(cls: type[Model]) -> _Schema:
    """Read ``cls``'s fields and validators, build the checkers and cache the result."""
    specs: dict[str, FieldInfo] = {}
    field_validators: dict[str, list[Callable[[Any], Any]]] = {}
    model_validators: list[Callable[[Any], Any]] = []
    for base in reversed(cls.__mro__):
        if not (isinstance(base, type) and issubclass(base, Model)) or base is Model:
            continue
        own = base.__dict__.get("__annotations__", {})  # noqa: RUF063 - no inspect here
        for name, annotation in own.items():
            if _is_classvar(annotation) or name.startswith("_"):
                continue
            value = base.__dict__.get(name, _MISSING)
            spec = value._copy() if isinstance(value, FieldInfo) else FieldInfo(default=value)
            spec.name = name
            spec.annotation = _evaluate(base, annotation)
            specs[name] = spec
        for attr, value in base.__dict__.items():
            func = getattr(value, "__func__", value)
            names = getattr(func, _VALIDATES, None)
            if names is not None:
                bound = getattr(cls, attr)
                for n in names:
                    field_validators.setdefault(n, []).append(bound)
            elif getattr(func, _MODEL_VALIDATOR, None) == "after":
                model_validators.append(func)
    unknown = set(field_validators) - set(specs)
    if unknown:
        raise TypeError(f"{cls.__qualname__}: validators for unknown fields {sorted(unknown)}")
    strict = cls.__strict__
    for spec in specs.values():
        spec.check = _checker(spec.annotation, spec, strict, f"{cls.__qualname__}.{spec.name}")
        spec.validators = tuple(field_validators.get(spec.name, ()))
    schema = _Schema(list(specs.values()), model_validators)
    by_name = cls.__by_name__
    for f in schema.fields:
        assert f.check is not None
        name_key = f.name if f.alias and by_name else None
        step = (f.key, name_key, f.name, f.default, f.default_factory, f.check, f.validators)
        schema.plan.append(step)
    type.__setattr__(cls, _SCHEMA, schema)
    return schema


# --- checkers --------------------------------------------------------------------------------


def _error(
    errors: list[ErrorDict],
    kind: str,
    loc: Loc,
    msg: str,
    value: Any,
    ctx: dict[str, Any] | None = None,
) -> Any:
    err: ErrorDict = {"type": kind, "loc": loc, "msg": msg, "input": value}
    if ctx is not None:
        err["ctx"] = ctx
    errors.append(err)
    return _BAD


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _checker(tp: Any, spec: FieldInfo, strict: bool, where: str) -> Checker:
    """The checker of annotation ``tp``; the field's constraints apply to its non-None part."""
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = typing.get_args(tp)
        members = tuple(a for a in args if a is not type(None))
        if len(members) == len(args):
            return _union(members, where)
        if len(members) != 1:
            raise TypeError(f"{where}: only X | None and str | int unions are supported")
        return _nullable(_checker(members[0], spec, strict, where))
    if tp is str:
        return _str_checker(spec.min_length, spec.max_length, strict)
    if tp is bool:
        _no_constraints(spec, where, "bool")
        return _check_bool if strict else _check_lax_bool
    if tp is Any:
        return _check_any
    if origin is Literal:
        return _literal(typing.get_args(tp), where)
    if tp is int and strict:
        return _int_checker(spec.ge, spec.le)
    if isinstance(tp, type) and issubclass(tp, Model) and strict:
        _no_constraints(spec, where, tp.__name__)
        return _model_checker(tp)
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        if not strict and item is not str:
            raise TypeError(f"{where}: lax list[{item!r}] is not supported")
        return _list_checker(
            _checker(item, FieldInfo(), strict, where), spec.min_length, spec.max_length, strict
        )
    if origin is dict and strict:
        key, value = typing.get_args(tp) or (str, Any)
        if key is not str:
            raise TypeError(f"{where}: dict keys must be str, not {key!r}")
        return _dict_checker(_checker(value, FieldInfo(), strict, where))
    raise TypeError(f"{where}: the annotation {tp!r} is not supported by krm_fn.api.schema")


def _no_constraints(spec: FieldInfo, where: str, what: str) -> None:
    if (spec.min_length, spec.max_length, spec.ge, spec.le) != (None, None, None, None):
        raise TypeError(f"{where}: {what} takes no length or bound constraints")


def _nullable(check: Checker) -> Checker:
    def nullable(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
        return None if v is None else check(v, loc, errors)

    return nullable


def _union(members: tuple[Any, ...], where: str) -> Checker:
    """``str | int``: the first member that accepts the value; else every member's errors."""
    if members != (str, int):
        raise TypeError(f"{where}: only the str | int union is supported")
    checks = [("str", _str_checker(None, None, True)), ("int", _int_checker(None, None))]

    def union(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
        mine: list[ErrorDict] = []
        for tag, check in checks:
            out = check(v, (*loc, tag), mine)
            if out is not _BAD:
                return out
        errors.extend(mine)
        return _BAD

    return union


def _check_any(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
    return v


def _str_checker(min_length: int | None, max_length: int | None, strict: bool) -> Checker:
    def check_str(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
        if type(v) is not str:
            if isinstance(v, str):
                v = str.__str__(v)
            elif not strict and isinstance(v, bytes | bytearray):
                try:
                    v = bytes(v).decode()
                except UnicodeDecodeError:
                    return _error(
                        errors,
                        "string_unicode",
                        loc,
                        "Input should be a valid string, unable to parse raw data as a unicode "
                        "string",
                        v,
                    )
            else:
                return _error(errors, "string_type", loc, "Input should be a valid string", v)
        if min_length is not None and len(v) < min_length:
            return _error(
                errors,
                "string_too_short",
                loc,
                f"String should have at least {_plural(min_length, 'character')}",
                v,
                {"min_length": min_length},
            )
        if max_length is not None and len(v) > max_length:
            return _error(
                errors,
                "string_too_long",
                loc,
                f"String should have at most {_plural(max_length, 'character')}",
                v,
                {"max_length": max_length},
            )
        return v

    return check_str


def _int_checker(ge: int | None, le: int | None) -> Checker:
    def check_int(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
        if type(v) is not int:
            if isinstance(v, int) and not isinstance(v, bool):
                v = int(v)
            else:
                return _error(errors, "int_type", loc, "Input should be a valid integer", v)
        if ge is not None and v < ge:
            return _error(
                errors,
                "greater_than_equal",
                loc,
                f"Input should be greater than or equal to {ge}",
                v,
                {"ge": ge},
            )
        if le is not None and v > le:
            return _error(
                errors,
                "less_than_equal",
                loc,
                f"Input should be less than or equal to {le}",
                v,
                {"le": le},
            )
        return v

    return check_int


def _check_bool(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
    if v is True or v is False:
        return v
    return _error(errors, "bool_type", loc, "Input should be a valid boolean", v)


_BOOL_WORDS = {
    **dict.fromkeys(("0", "off", "f", "false", "n", "no"), False),
    **dict.fromkeys(("1", "on", "t", "true", "y", "yes"), True),
}
_I64 = 2**63


def _check_lax_bool(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
    if v is True or v is False:
        return v
    unparsable = False
    if isinstance(v, str | bytes):
        try:
            text = v if isinstance(v, str) else v.decode()
        except UnicodeDecodeError:
            text = ""
        if text.lower() in _BOOL_WORDS:
            return _BOOL_WORDS[text.lower()]
        unparsable = True
    elif isinstance(v, int):
        if v in (0, 1):
            return v == 1
        unparsable = -_I64 <= v < _I64
    elif isinstance(v, float):
        if v in (0.0, 1.0):
            return v == 1.0
        unparsable = v.is_integer()
    if unparsable:
        return _error(
            errors,
            "bool_parsing",
            loc,
            "Input should be a valid boolean, unable to interpret input",
            v,
        )
    return _error(errors, "bool_type", loc, "Input should be a valid boolean", v)


def _literal(values: tuple[Any, ...], where: str) -> Checker:
    if not all(type(x) is str for x in values):
        raise TypeError(f"{where}: only Literal of strings is supported")
    allowed = {x: x for x in values}
    shown = [repr(x) for x in values]
    expected = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    msg = f"Input should be {expected}"

    def literal(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
        if isinstance(v, str) and v in allowed:
            return allowed[v]
        return _error(errors, "literal_error", loc, msg, v, {"expected": expected})

    return literal


def _list_checker(
    item: Checker, min_length: int | None, max_length: int | None, strict: bool
) -> Checker:
    def check_list(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
        if not isinstance(v, list):
            if strict or isinstance(v, str | bytes | bytearray | dict) or not _iterable(v):
                return _error(errors, "list_type", loc, "Input should be a valid list", v)
            v = list(v)
        out = []
        bad = False
        for i, x in enumerate(v):
            r = item(x, (*loc, i), errors)
            if r is _BAD:
                bad = True
            else:
                out.append(r)
        if bad:
            return _BAD
        n = len(out)
        if min_length is not None and n < min_length:
            return _error(
                errors,
                "too_short",
                loc,
                f"List should have at least {_plural(min_length, 'item')} after validation, "
                f"not {n}",
                v,
                {"field_type": "List", "min_length": min_length, "actual_length": n},
            )
        if max_length is not None and n > max_length:
            return _error(
                errors,
                "too_long",
                loc,
                f"List should have at most {_plural(max_length, 'item')} after validation, not {n}",
                v,
                {"field_type": "List", "max_length": max_length, "actual_length": n},
            )
        return out

    return check_list


def _iterable(v: Any) -> bool:
    try:
        iter(v)
    except TypeError:
        return False
    return True


_KEY = _str_checker(None, None, True)


def _loc_item(key: Any) -> int | str:
    """A mapping key as pydantic puts it in a location: a str, an int in 64 bits, else repr."""
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, int) and -_I64 <= key < _I64:
        return int(key)
    return repr(key)


def _dict_checker(value: Checker) -> Checker:
    def check_dict(v: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
        if not isinstance(v, dict):
            return _error(errors, "dict_type", loc, "Input should be a valid dictionary", v)
        out = {}
        bad = False
        for k, x in v.items():
            at = k if type(k) is str else _loc_item(k)
            key = _KEY(k, (*loc, at, "[key]"), errors)
            r = value(x, (*loc, at), errors)
            if key is _BAD or r is _BAD:
                bad = True
            else:
                out[key] = r
        return _BAD if bad else out

    return check_dict


_MODEL_CHECKERS: dict[type[Model], Checker] = {}


def _model_checker(cls: type[Model]) -> Checker:
    found = _MODEL_CHECKERS.get(cls)
    if found is None:
        found = _MODEL_CHECKERS[cls] = _make_model_checker(cls)
    return found


def _make_model_checker(cls: type[Model]) -> Checker:
    name = cls.__name__
    msg = f"Input should be a valid dictionary or instance of {name}"
    ctx = {"class_name": name}
    extra_mode = cls.__extra__
    new = object.__new__
    set_extra = object.__setattr__

    def check_model(data: Any, loc: Loc, errors: list[ErrorDict]) -> Any:
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            return _error(errors, "model_type", loc, msg, data, dict(ctx))
        schema = _schema(cls)
        start = len(errors)
        values: dict[str, Any] = {}
        used: set[str] = set()
        for key, name_key, attr, default, factory, check, validators in schema.plan:
            if key in data:
                found = key
            elif name_key is not None and name_key in data:
                found = name_key
            else:
                if default is not _MISSING:
                    values[attr] = default
                elif factory is not _MISSING:
                    values[attr] = factory()
                else:
                    _error(errors, "missing", (*loc, key), "Field required", data)
                continue
            used.add(found)
            where = (*loc, found)
            raw = data[found]
            v = check(raw, where, errors)
            if v is _BAD:
                continue
            for validate in validators:
                v = _call(validate, v, where, raw, errors)
                if v is _BAD:
                    break
            else:
                values[attr] = v
        extra: dict[str, Any] | None = {} if extra_mode == "allow" else None
        if len(used) != len(data):
            for k, v in data.items():
                if not isinstance(k, str):
                    _error(errors, "invalid_key", (*loc, _loc_item(k)), "Keys should be strings", k)
                elif k in used:
                    continue
                elif extra is not None:
                    extra[k] = v
                elif extra_mode == "forbid":
                    _error(
                        errors, "extra_forbidden", (*loc, k), "Extra inputs are not permitted", v
                    )
        if len(errors) != start:
            return _BAD
        obj = new(cls)
        obj.__dict__.update(values)
        set_extra(obj, "_extra", extra)
        for validate in schema.model_validators:
            obj = _call(validate, obj, loc, data, errors)
            if obj is _BAD:
                return _BAD
        return obj

    return check_model


def _call(fn: Callable[[Any], Any], v: Any, loc: Loc, shown: Any, errors: list[ErrorDict]) -> Any:
    """Run one validator: its result, or ``_BAD`` with its ``ValueError`` recorded."""
    try:
        return fn(v)
    except ValueError as exc:
        return _error(errors, "value_error", loc, f"Value error, {exc}", shown, {"error": exc})
    except AssertionError as exc:
        return _error(
            errors, "assertion_error", loc, f"Assertion failed, {exc}", shown, {"error": exc}
        )


def iter_models(tp: Any) -> Iterator[type[Model]]:
    """The :class:`Model` classes named in annotation ``tp``, in order."""
    if isinstance(tp, type) and issubclass(tp, Model):
        yield tp
    for arg in typing.get_args(tp):
        yield from iter_models(arg)
