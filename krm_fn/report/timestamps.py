"""Read timestamps: Go time layouts (LogProfile ``timestamp.layout``) and the common log forms.

Invariants:
    * A Go layout is translated token by token (``2006``, ``01``, ``02``, ``15``, ``04``,
      ``05``, ``.999…``/``.000…``, ``Z07:00``, ``-0700``, ``MST``, ``Jan``, ``Mon``, ``PM``);
      anything else is a literal. A layout without year, month, day, hour and minute is
      rejected, so a timestamp is never half read.
    * Timestamps without a zone are read as UTC; only differences between timestamps of the
      same log are ever used, so the choice cannot change a result.
    * :func:`find_timestamp` recognises only forms with a full date and time; a bare time
      of day is never taken for a timestamp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

_LONG_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_MONTHS = [month[:3] for month in _LONG_MONTHS]


class LayoutError(ValueError):
    """A Go time layout cannot be used to read timestamps."""


_TOKENS: list[tuple[str, str]] = [
    ("January", r"(?P<month_name>[A-Z][a-z]+)"), ("Monday", r"[A-Z][a-z]+"),
    ("2006", r"(?P<year>\d{4})"), ("Z07:00", r"(?P<zone>Z|[+-]\d{2}:\d{2})"),
    ("Z0700", r"(?P<zone>Z|[+-]\d{4})"), ("Z07", r"(?P<zone>Z|[+-]\d{2})"),
    ("-07:00", r"(?P<zone>[+-]\d{2}:\d{2})"), ("-0700", r"(?P<zone>[+-]\d{4})"),
    ("-07", r"(?P<zone>[+-]\d{2})"), ("MST", r"[A-Z]{3,5}"),
    ("Jan", r"(?P<month_abbr>[A-Z][a-z]{2})"), ("Mon", r"[A-Z][a-z]{2}"),
    ("01", r"(?P<month>\d{2})"), ("02", r"(?P<day>\d{2})"), ("_2", r"\s?(?P<day>\d{1,2})"),
    ("15", r"(?P<hour>\d{2})"), ("03", r"(?P<hour12>\d{2})"), ("04", r"(?P<minute>\d{2})"),
    ("05", r"(?P<second>\d{2})"), ("06", r"(?P<year2>\d{2})"), ("PM", r"(?P<ampm>AM|PM)"),
    ("pm", r"(?P<ampm>am|pm)"), ("1", r"(?P<month>\d{1,2})"), ("2", r"(?P<day>\d{1,2})"),
    ("3", r"(?P<hour12>\d{1,2})"), ("4", r"(?P<minute>\d{1,2})"), ("5", r"(?P<second>\d{1,2})"),
]  # fmt: skip
"""Go layout tokens, longest first where one is a prefix of another."""
_FRACTION_RE = re.compile(r"[.,](0+|9+)(?![0-9])")
_REQUIRED_FIELDS = (  # one of each (the module's invariants)
    {"year", "year2"}, {"month", "month_abbr", "month_name"}, {"day"},
    {"hour", "hour12"}, {"minute"},
)  # fmt: skip


def _zone(text: str | None) -> timezone:
    if text is None or text == "Z":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")  # HH or HHMM
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))


@dataclass(frozen=True)
class GoLayout:
    """A Go reference-time layout (``2006-01-02 15:04:05.999999``) as a regular expression."""

    layout: str
    pattern: re.Pattern[str]

    @classmethod
    def compile(cls, layout: str) -> GoLayout:
        """Translate a Go layout; ``LayoutError`` when it lacks year, month, day, hour or minute."""
        if not layout.strip():
            raise LayoutError("timestamp layout is empty")
        parts: list[str] = []
        seen: set[str | None] = set()
        pos = 0
        while pos < len(layout):
            fraction = _FRACTION_RE.match(layout, pos)
            if fraction is not None:
                width = len(fraction.group(1))
                sep = re.escape(layout[pos])
                if fraction.group(1)[0] == "9":
                    parts.append(rf"(?:{sep}(?P<fraction>\d{{1,{width}}}))?")
                else:
                    parts.append(rf"{sep}(?P<fraction>\d{{{width}}})")
                pos = fraction.end()
                continue
            for token, regex in _TOKENS:
                if layout.startswith(token, pos):
                    group = re.search(r"\?P<(\w+)>", regex)
                    name = group.group(1) if group else None
                    if name in seen:  # a second field of one kind is matched, not captured
                        regex = re.sub(r"\?P<\w+>", "?:", regex)
                    seen.add(name)
                    parts.append(regex)
                    pos += len(token)
                    break
            else:
                parts.append(r"\s+" if layout[pos] == " " else re.escape(layout[pos]))
                pos += 1
        if not all(seen & fields for fields in _REQUIRED_FIELDS):
            raise LayoutError(
                f"timestamp layout {layout!r} must contain year (2006), month (01 or Jan), "
                "day (02), hour (15) and minute (04) in Go reference-time notation"
            )
        return cls(layout, re.compile("".join(parts)))

    def search(self, text: str) -> datetime | None:
        """The first timestamp of the layout in ``text`` (timezone-aware), or ``None``."""
        match = self.pattern.search(text)
        if match is None:
            return None
        fields = match.groupdict()
        try:
            year = int(fields["year"]) if fields.get("year") else 2000 + int(fields["year2"])
            if fields.get("month"):
                month = int(fields["month"])
            elif fields.get("month_abbr"):
                month = _MONTHS.index(fields["month_abbr"]) + 1
            else:
                month = _LONG_MONTHS.index(fields["month_name"]) + 1
            pm = 12 if (fields.get("ampm") or "").lower() == "pm" else 0
            hour = int(fields["hour"]) if fields.get("hour") else int(fields["hour12"]) % 12 + pm
            micro = int(((fields.get("fraction") or "") + "000000")[:6])
            day, minute, second = (int(fields[k] or 0) for k in ("day", "minute", "second"))
            return datetime(
                year, month, day, hour, minute, second, micro, _zone(fields.get("zone"))
            )
        except (ValueError, KeyError, TypeError):
            return None


_GENERIC_RE = re.compile(
    r"(?<![\d-])\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?(?!\d)"
)


def find_timestamp(text: str) -> datetime | None:
    """The first full date-and-time of a line (UTC without a zone), or ``None``.

    Recognised: ``[2024-10-24 09:49:45]``, ``[2024-10-24 09:49:45.123456]`` (Megatron-LM),
    ``[2023-11-29 08:52:27,711]`` (Python logging), ``datetime: 2024-07-16 22:14:01`` and RFC
    3339 (``kubectl logs --timestamps``, ``[2025-11-20T14:55:23+08:00]``).
    """
    match = _GENERIC_RE.search(text)
    if match is None:
        return None
    try:  # ISO 8601 as matched: fractions are cut to microseconds, as Go's layouts read them
        stamp = datetime.fromisoformat(match.group(0))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
