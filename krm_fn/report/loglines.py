"""The line model every parser reads: text plus where it came from.

Invariants:
    * Line numbers are 1-based and count the lines of the source as given, so a number in
      a report can be looked up with ``sed -n Np FILE``.
    * Text is kept as read, without the newline; nothing is stripped here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LogLine:
    """One line of a log: its source (a file, ``<stdin>``), 1-based number and text."""

    source: str
    number: int
    text: str


@dataclass(frozen=True)
class LogSource:
    """One log (a file, a section of a file, or standard input) and its lines, in order."""

    name: str
    lines: tuple[LogLine, ...]

    @classmethod
    def from_text(cls, name: str, text: str, first_line: int = 1) -> LogSource:
        """Split ``text`` into lines numbered from ``first_line`` (sections start later)."""
        numbered = enumerate(text.splitlines(), first_line)
        return cls(name, tuple(LogLine(name, n, t) for n, t in numbered))
