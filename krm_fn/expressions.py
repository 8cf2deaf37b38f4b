"""CEL, the language of ``when.expression`` (render) and thresholds (report), as NVCRE runs it.

NVCRE compiles both with cel-go and wants a bool (NVIDIA/cluster-readiness-engine
``pkg/controller/workflow_detect.go``, ``pkg/threshold/evaluator.go``); :data:`WHEN` and
:data:`THRESHOLD` declare its variables. The library: cel-expr-python, Google's CEL C++ runtime
with cel-go's type checker (why: bench/results.md, "Measured decisions").

Invariants:
    * The library is imported by the first :func:`parse`, not with this module, so a render
      without expressions does not load it (tests/test_lazy_imports.py).
    * Every problem raises :class:`ExpressionError`, all of an expression's at once: syntax,
      unknown names, types (checked before evaluation, so a mistake fails on every input), a
      non-bool result, failed evaluations. Positions are 1-based columns from the start of the
      source (its end is ``len(source) + 1``), shown with a caret under the column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["THRESHOLD", "WHEN", "Dialect", "Expression", "ExpressionError", "parse"]


@dataclass(frozen=True, slots=True)
class Dialect:
    """One use of CEL: each variable's ``(name, CEL type)``; ``cross_numeric``: see _environment."""

    variables: tuple[tuple[str, str], ...]
    cross_numeric: bool = False


_STRINGS: Final = ("platform", "gpuArchitecture", "workloadKind", "topologyMode")
WHEN: Final = Dialect((*((name, "string") for name in _STRINGS), ("domainCount", "int")))
"""``spec.overrides[].when.expression``: NVCRE's ``OverrideContext``."""

THRESHOLD: Final = Dialect((("value", "double"),), cross_numeric=True)
"""``spec.thresholds`` values: the measured metric is ``value``."""


class ExpressionError(ValueError):
    """A refused expression: ``(column, problem)`` pairs (``None``: at evaluation), first first."""

    def __init__(self, source: str, problems: Sequence[tuple[int | None, str]]) -> None:
        self.source = source
        self.problems = tuple(dict.fromkeys(problems))
        self.column, self.what = self.problems[0]
        super().__init__("\n".join(_shown(source, c, w) for c, w in self.problems))


@dataclass(frozen=True, slots=True)
class Expression:
    """A compiled, type-checked expression whose result is a bool."""

    source: str
    program: Any  # the library's compiled expression

    def evaluate(self, variables: Mapping[str, object]) -> bool:
        """The value with ``variables`` bound; :class:`ExpressionError` if evaluation fails."""
        try:
            out = self.program.eval(data=dict(variables))
            value, failed = out.plain_value(), out.type().name() == "ERROR"
        except Exception as exc:  # the library's other way to report a failed evaluation
            value, failed = str(exc), True
        if failed or not isinstance(value, bool):
            what = ", ".join(f"{k}={v!r}" for k, v in variables.items()) + f": {_plain(value)}"
            raise ExpressionError(self.source, [(None, f"evaluating with {what}")])
        return value


def parse(source: str, dialect: Dialect) -> Expression:
    """Compile and type-check ``source``: :class:`ExpressionError` unless its result is a bool."""
    if not source.strip():
        raise ExpressionError(source, [(1, "the expression is empty")])
    env = _ENVS.get(dialect) or _ENVS.setdefault(dialect, _environment(dialect))
    try:
        program = env.compile(source)
    except Exception as exc:  # the library reports every refused expression this way
        issues = _ISSUE.findall(str(exc)) or [("1", "1", _plain(exc))]
        found = [(_offset(source, int(n), int(c)), _explain(w, dialect)) for n, c, w in issues]
        raise ExpressionError(source, found) from None
    kind = program.return_type().name().lower()
    if kind != "bool":
        example = "value >= 900" if dialect.cross_numeric else "platform == 'aws'"
        raise ExpressionError(source, [(1, f"the result is {kind}, not a bool, e.g. {example}")])
    return Expression(source, program)


_ENVS: dict[Dialect, Any] = {}
_ISSUE: Final = re.compile(r"ERROR: <input>:(\d+):(\d+): ([^\n]*)")
_NUMBERS: Final = ("int", "uint", "double")
_PROTO_TIMES: Final = ("google.protobuf.Timestamp", "google.protobuf.Duration")
_BOOL: Final = {"type_name": "bool"}


def _environment(dialect: Dialect) -> Any:
    """The library's environment for ``dialect``.

    ``cross_numeric`` is cel-go's ``CrossTypeNumericComparisons(true)``: ``<`` ``<=`` ``>``
    ``>=`` compare ints with doubles (``==`` and arithmetic do not). This library has no switch
    for it but its runtime compares mixed numbers, so they are redeclared for the checker.
    """
    from cel_expr_python import cel  # the CEL library: only when an expression is present

    declared = [{"name": name, "type_name": cel_type} for name, cel_type in dialect.variables]
    config: dict[str, Any] = {"variables": declared}
    if dialect.cross_numeric:
        same = [(t, t) for t in ("bool", *_NUMBERS, "string", "bytes", *_PROTO_TIMES)]
        pairs = same + [(a, b) for a in _NUMBERS for b in _NUMBERS if a != b]
        ops = ("_<_", "_<=_", "_>_", "_>=_")
        config["stdlib"] = {"exclude_functions": [{"name": op} for op in ops]}
        config["functions"] = [
            {"name": op, "overloads": [_signature(op, a, b) for a, b in pairs]} for op in ops
        ]
    return cel.NewEnv(config=cel.NewEnvConfigFromYaml(json.dumps(config)))  # JSON is YAML


def _signature(op: str, a: str, b: str) -> dict[str, Any]:
    return {"id": f"{op}{a}_{b}", "args": [{"type_name": a}, {"type_name": b}], "return": _BOOL}


# CEL's message -> ours, with what is allowed and the fix: "pattern => text"; the text uses the
# pattern's groups ({1}, {2}) and {meant}, {names}, {op}, {fix} (see _explain).
_TABLE: Final = r"""token recognition error at: '(['"]) => a string that does not end, or has an unknown escape (CEL's: \n \t \\ \' \" \x41 \u0041 ...)
token recognition error at: '(.) => unexpected character '{1}'{meant}
input '<EOF>' expecting \{.*IDENTIFIER\} => the expression ends early: expected a value, a name, '(', '[', '-' or '!'
input '(.*)' expecting <EOF> => unexpected '{1}' after a complete expression{meant}
input '(.*)' expecting \{.*IDENTIFIER\} => unexpected '{1}': expected a value, a name, '(', '[', '-' or '!'
input '<EOF>' expecting (.*) => the expression ends early: expected {1}
input '(.*)' expecting (.*) => unexpected '{1}': expected {2}
missing '(.*)' at '<EOF>' => the expression ends early: expected '{1}'
missing '(.*)' at '(.*)' => expected '{1}' before '{2}'
undeclared reference to '(\w+)'.* => unknown name '{1}': the variables are {names}; the functions are CEL's standard ones (size, contains, startsWith, endsWith, matches, int, uint, double, string, timestamp, duration, has, all, exists, exists_one, map, filter, ...)
found no matching overload for '(.+)' applied to '\((.*)\)' => '{op}' is not defined for ({2}){fix}
Expression recursion limit exceeded\. limit: (\d+) => the expression nests deeper than CEL allows ({1} levels)"""
_REWRITES: Final = [(re.compile(p), t) for p, t in (ln.split(" => ") for ln in _TABLE.splitlines())]
_MEANT: Final = {"=": "'=='", "&": "'&&'", "|": "'||'", "and": "'&&'", "or": "'||'", "not": "'!'"}
_MEANT_ELSE: Final = {")": "; it closes no '('", "": "; join conditions with '&&' or '||'"}


def _explain(what: str, dialect: Dialect) -> str:
    """CEL's message for one problem, reworded where a user needs what is allowed and a fix."""
    for pattern, text in _REWRITES:
        m = pattern.search(what)
        if m is None:
            continue
        choices = (g[1:-1].replace(", ", " or ") if g[:1] == "{" else g for g in m.groups())
        groups = (m[0], *choices, "", "")
        token, op = groups[1], groups[1].replace("_", "").lstrip("@")
        meant = f"; did you mean {_MEANT[token]}?" if token in _MEANT else ""
        meant = meant or _MEANT_ELSE.get(token, _MEANT_ELSE[""]) * ("expecting <EOF>" in what)
        fix = "; compare values of one type"
        if len(set(re.findall(r"\b(?:u?int|double)\b", groups[2]))) > 1:
            write = "the number as a double, 900.0" if dialect.cross_numeric else "2 or 2.0 alike"
            fix = f": CEL does not mix int and double here; write {write}, or use double() or int()"
        elif op in ("&&", "||", "!", "?:"):
            fix = ": it needs bools, i.e. comparisons such as x == 'y'"
        names = ", ".join(name for name, _ in dialect.variables)
        return text.format(*groups, meant=meant, names=names, op=op, fix=fix)
    return what


def _plain(error: object) -> str:
    """The library's message without its status: ``INVALID_ARGUMENT: x [..]`` -> ``x``."""
    return re.sub(r"^[A-Z_]+: |\s*\[[A-Z_]+\]$", "", str(error).strip())


def _offset(source: str, line: int, column: int) -> int:
    """CEL's line and 1-based column as a 1-based column from the start of the source."""
    return sum(len(text) + 1 for text in source.split("\n")[: line - 1]) + column


def _shown(source: str, column: int | None, what: str) -> str:
    """A problem with its position, the source line and a caret under the column."""
    if column is None:
        return what
    start = source.rfind("\n", 0, column - 1) + 1
    end = source.find("\n", start)
    line = source[start : None if end < 0 else end]
    return f"position {column}: {what}\n    {line}\n    {' ' * (column - 1 - start)}^"
