"""Record classes (the ``@dataclass`` subset this package uses) that cost nothing to define.

``dataclasses`` compiles every generated method with ``exec`` when the class is defined
(about 0.8 ms per frozen class on the 2-core CI machines) and imports :mod:`inspect`; with
some sixty records on the render path that alone was a fifth of the cold start. A
:func:`record` class is defined in microseconds and compiles its methods, all at once, the
first time one of them is used, so classes a run never instantiates cost nothing.

Invariants:
    * Semantics follow ``@dataclass`` / ``@dataclass(frozen=True)`` for what the package
      uses: fields are the annotated class attributes in definition order, base records'
      fields first (a redefined field keeps its place); defaults are class attribute values
      or :func:`field` (``default=`` / ``default_factory=``); a field without default after
      one with a default is a ``TypeError`` at definition; construction by position or
      keyword; ``__post_init__`` is called when defined; ``ClassVar`` annotations are not
      fields.
    * ``==`` compares the fields of two instances of exactly the same class (otherwise
      ``NotImplemented``); ``repr`` is ``Name(a=1, b='x')``; frozen records are hashable by
      their fields and refuse attribute assignment and deletion with
      :class:`FrozenInstanceError` (an ``AttributeError``); mutable records are unhashable.
    * Type checkers see them as dataclasses (``typing.dataclass_transform``), so the
      synthesized ``__init__`` is checked under ``mypy --strict``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["FrozenInstanceError", "field", "fields_of", "record"]

T = TypeVar("T")
C = TypeVar("C", bound=type)

_FIELDS = "__record_fields__"
_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


class _Field:
    __slots__ = ("default", "default_factory")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | Any) -> None:
        self.default = default
        self.default_factory = default_factory


@overload
def field(*, default: T) -> T: ...
@overload
def field(*, default_factory: Callable[[], T]) -> T: ...
def field(*, default: Any = _MISSING, default_factory: Any = _MISSING) -> Any:
    """A field's default: a value, or a factory called for every new instance."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("field() takes default or default_factory, not both")
    return _Field(default, default_factory)


def fields_of(cls_or_obj: Any) -> tuple[str, ...]:
    """The field names of a record class or instance, in order."""
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    return tuple(getattr(cls, _FIELDS))


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "Final", "typing.Final"))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r} of a frozen record")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r} of a frozen record")


def _compile(cls: type) -> None:
    """Compile ``cls``'s ``__init__``, ``__eq__``, ``__repr__`` (and ``__hash__``) once."""
    spec: dict[str, _Field] = getattr(cls, _FIELDS)
    frozen: bool = cls.__dict__["__record_frozen__"]
    names = list(spec)
    env: dict[str, Any] = {"_MISSING": _MISSING}
    params, body = [], []
    target = "_d" if frozen else "self"
    if frozen:
        body.append("    _d = self.__dict__")
    for n in names:
        f = spec[n]
        if f.default_factory is not _MISSING:
            env[f"_f_{n}"] = f.default_factory
            params.append(f"{n}=_MISSING")
            body.append(f"    if {n} is _MISSING:\n        {n} = _f_{n}()")
        elif f.default is not _MISSING:
            env[f"_d_{n}"] = f.default
            params.append(f"{n}=_d_{n}")
        else:
            params.append(n)
        body.append(f"    {target}['{n}'] = {n}" if frozen else f"    self.{n} = {n}")
    if "__post_init__" in dir(cls):
        body.append("    self.__post_init__()")
    if len(body) == (1 if frozen else 0):
        body.append("    pass")
    attrs = "".join(f"self.{n}, " for n in names)
    others = "".join(f"other.{n}, " for n in names)
    shown = ", ".join(f"{n}={{self.{n}!r}}" for n in names)
    src = [
        f"def __init__(self, {', '.join(params)}):" if params else "def __init__(self):",
        *body,
        "def __eq__(self, other):",
        "    if other.__class__ is not self.__class__:",
        "        return NotImplemented",
        f"    return ({attrs}) == ({others})",
        "def __repr__(self):",
        f"    return f'{{self.__class__.__qualname__}}({shown})'",
    ]
    if frozen:
        src += ["def __hash__(self):", f"    return hash(({attrs}))"]
    ns: dict[str, Any] = {}
    exec("\n".join(src), env, ns)  # the source is built from field identifiers only
    for name, fn in ns.items():
        fn.__qualname__ = f"{cls.__qualname__}.{name}"
        type.__setattr__(cls, name, fn)


def _lazy(cls: type, name: str) -> Callable[..., Any]:
    def first_use(self: Any, *args: Any, **kwargs: Any) -> Any:
        if cls.__dict__.get(name) is first_use:
            _compile(cls)
        return getattr(cls, name)(self, *args, **kwargs)

    first_use.__name__ = name
    return first_use


def _make(cls: C, frozen: bool) -> C:
    spec: dict[str, _Field] = {}
    for base in reversed(cls.__mro__[1:]):
        spec.update(getattr(base, _FIELDS, {}) if _FIELDS in base.__dict__ else {})
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - inspect is what we avoid
    for n, annotation in own.items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(n, _MISSING)
        if isinstance(value, _Field):
            spec[n] = value
            if value.default is not _MISSING:
                setattr(cls, n, value.default)
            else:
                delattr(cls, n)
        else:
            spec[n] = _Field(value, _MISSING)
    seen_default = False
    for n, f in spec.items():
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"{cls.__qualname__}: field {n!r} without a default follows one with")
        seen_default = seen_default or has_default
    target: Any = cls
    setattr(target, _FIELDS, spec)
    target.__record_frozen__ = frozen
    for name in ("__init__", "__eq__", "__repr__") + (("__hash__",) if frozen else ()):
        setattr(target, name, _lazy(cls, name))
    if frozen:
        target.__setattr__ = _frozen_setattr
        target.__delattr__ = _frozen_delattr
    else:
        target.__hash__ = None
    setattr(target, "__match_args__", tuple(spec))  # noqa: B010 - mypy refuses the assignment
    return cls


@overload
def record(cls: C, /) -> C: ...
@overload
def record(*, frozen: bool = False) -> Callable[[C], C]: ...
@dataclass_transform(field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """Make ``cls`` a record; ``@record`` or ``@record(frozen=True)``."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)
