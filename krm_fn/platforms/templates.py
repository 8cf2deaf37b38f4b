"""The ``{...}`` templates of catalog values: scanning, checking and rendering.

One job: find the placeholders in a catalog string, say what is wrong with them, and
substitute the context's numbers.

Invariants:
    * A placeholder is ``{name}`` or ``{name|filter}`` (name: a letter, then letters, digits
      or ``_``; filter: letters) not preceded by ``$``: ``${VAR}`` shell syntax is never a
      template, nor is ``{a,b}`` brace expansion.
    * :data:`TEMPLATE_VARIABLES` are the only names; ``|int`` is the only filter, and only as
      a whole resources value or claim count (``"{nicsPerNode|int}"``), which renders as an
      integer.
    * :func:`render_resource` returns ``None`` ("drop it") for a templated value that renders
      to 0, so no zero-count request or claim is written.
    * Stdlib only and no regular expressions: scanned by hand, because the equivalent regular
      expression costs more to compile than the whole bundled catalog costs to load
      (``tests/platforms/test_catalog_validation.py`` checks the scanner against it).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "TEMPLATE_VARIABLES",
    "is_int_template",
    "placeholders",
    "render",
    "render_resource",
    "template_problem",
]

TEMPLATE_VARIABLES: tuple[str, ...] = ("gpusPerNode", "nicsPerNode", "enableMNNVL")
"""The placeholder names a catalog value may use."""

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_WORD = _LETTERS | frozenset("0123456789_")


def _placeholder_at(value: str, start: int) -> tuple[int, str, str | None] | None:
    """The placeholder whose ``{`` is at ``start``: (end, name, ``|filter`` or None)."""
    if start > 0 and value[start - 1] == "$":
        return None
    size = len(value)
    end = start + 1
    if end >= size or value[end] not in _LETTERS:
        return None
    end += 1
    while end < size and value[end] in _WORD:
        end += 1
    name = value[start + 1 : end]
    flt = None
    if end < size and value[end] == "|":
        stop = end + 1
        while stop < size and value[stop] in _LETTERS:
            stop += 1
        if stop == end + 1:
            return None
        flt, end = value[end:stop], stop
    if end < size and value[end] == "}":
        return end + 1, name, flt
    return None


def placeholders(value: str) -> list[tuple[int, int, str, str | None]]:
    """Every placeholder in ``value``: (start, end, name, filter), left to right."""
    found = []
    start = value.find("{")
    while start >= 0:
        match = _placeholder_at(value, start)
        if match is None:
            start = value.find("{", start + 1)
        else:
            found.append((start, *match))
            start = value.find("{", match[0])
    return found


def template_problem(value: str, *, allow_int: bool = False) -> str | None:
    """The first unknown placeholder or misplaced ``|int`` filter in ``value``, if any.

    Args:
        value: A catalog string.
        allow_int: ``value`` is a resources value or claim count, where a whole-value
            ``{name|int}`` is allowed.

    Returns:
        What is wrong and what is allowed, or ``None``.

    """
    if "{" not in value:
        return None
    for start, end, variable, flt in placeholders(value):
        text = value[start:end]
        if variable not in TEMPLATE_VARIABLES:
            return (
                f"unknown template placeholder {text!r} in {value!r}: "
                f"allowed are {', '.join('{' + v + '}' for v in TEMPLATE_VARIABLES)}"
            )
        if flt is None:
            continue
        if flt != "|int":
            return f"unknown template filter {flt!r} in {value!r}: only '|int' exists"
        if not allow_int or text != value:
            return (
                f"{value!r}: the '|int' filter is only allowed as a whole resources value, "
                "e.g. '{nicsPerNode|int}'"
            )
    return None


def is_int_template(value: str) -> bool:
    """Whether ``value`` is exactly one ``{name|int}`` placeholder."""
    if not (value.startswith("{") and value.endswith("|int}")):
        return False
    match = _placeholder_at(value, 0)
    return match is not None and match[0] == len(value)


def render(value: str, variables: Mapping[str, int]) -> str:
    """Substitute every placeholder of ``value`` (checked names only)."""
    if "{" not in value:
        return value
    parts: list[str] = []
    last = 0
    for start, end, variable, _flt in placeholders(value):
        parts += (value[last:start], str(variables[variable]))
        last = end
    parts.append(value[last:])
    return "".join(parts)


def render_resource(value: str | int, variables: Mapping[str, int]) -> str | int | None:
    """Render one resources value or claim count; ``None`` means "drop it" (templated, 0)."""
    if isinstance(value, int):
        return value
    if is_int_template(value):
        number = variables[value[1 : -len("|int}")]]
        return number if number != 0 else None
    rendered = render(value, variables)
    if rendered != value and rendered.strip() == "0":
        return None
    return rendered
