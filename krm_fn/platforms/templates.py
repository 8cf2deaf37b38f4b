"""The ``{...}`` templates of table values: checking and rendering.

One job: find the placeholders in a table string, say what is wrong with them, and
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
"""

from __future__ import annotations

import re
from collections.abc import Mapping

TEMPLATE_VARIABLES: tuple[str, ...] = ("gpusPerNode", "nicsPerNode", "enableMNNVL")
"""The placeholder names a table value may use."""

PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z][A-Za-z0-9_]*)(\|[A-Za-z]+)?\}")


def template_problem(value: str, *, allow_int: bool = False) -> str | None:
    """The first unknown placeholder or misplaced ``|int`` filter in ``value``, if any.

    ``allow_int``: ``value`` is a resources value or claim count, where a whole-value
    ``{name|int}`` is allowed.
    """
    for match in PLACEHOLDER.finditer(value):
        text, variable, flt = match.group(0), match.group(1), match.group(2)
        if variable not in TEMPLATE_VARIABLES:
            return (
                f"unknown template placeholder {text!r} in {value!r}: "
                f"allowed are {', '.join('{' + v + '}' for v in TEMPLATE_VARIABLES)}"
            )
        if flt is not None and flt != "|int":
            return f"unknown template filter {flt!r} in {value!r}: only '|int' exists"
        if flt is not None and (not allow_int or text != value):
            return (
                f"{value!r}: the '|int' filter is only allowed as a whole resources value, "
                "e.g. '{nicsPerNode|int}'"
            )
    return None


def is_int_template(value: str) -> bool:
    """Whether ``value`` is exactly one ``{name|int}`` placeholder."""
    match = PLACEHOLDER.fullmatch(value)
    return match is not None and match.group(2) == "|int"


def render(value: str, variables: Mapping[str, int]) -> str:
    """Substitute every placeholder of ``value`` (checked names only)."""
    if "{" not in value:
        return value
    return PLACEHOLDER.sub(lambda m: str(variables[m.group(1)]), value)


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
