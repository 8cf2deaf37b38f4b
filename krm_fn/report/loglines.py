"""The line model every parser reads: text plus where it came from.

Invariants:
    * Line numbers are 1-based and count the lines of the source as given, so a number in
      a report can be looked up with ``sed -n Np FILE``.
    * Text is kept as read, without the newline; nothing is stripped here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LogLine", "LogSource"]


@dataclass(frozen=True)
class LogLine:
    """One line of a log.

    Attributes:
        source: the file (or ``<stdin>``) the line came from.
        number: 1-based line number in that source.
        text: the line without its newline.

    """

    source: str
    number: int
    text: str

    @property
    def where(self) -> str:
        """``source:number``, for messages."""
        return f"{self.source}:{self.number}"


@dataclass(frozen=True)
class LogSource:
    """One log (a file, a section of a file, or standard input).

    Attributes:
        name: a label for messages: the path, or ``<stdin>``.
        lines: the lines, in order.

    """

    name: str
    lines: tuple[LogLine, ...]

    @classmethod
    def from_text(cls, name: str, text: str, first_line: int = 1) -> LogSource:
        """Split ``text`` into numbered lines.

        Args:
            name: the source label.
            text: the whole log.
            first_line: the number of the first line (sections of a file start later).

        Returns:
            The source.

        """
        return cls(
            name,
            tuple(
                LogLine(name, first_line + index, line)
                for index, line in enumerate(text.splitlines())
            ),
        )
