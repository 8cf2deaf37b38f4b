"""Go ``time.ParseDuration`` syntax (``1h30m``, ``90s``, ``1.5h``), as timeoutPerJob uses."""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string; ValueError when ``text`` is not one."""
    if not (s := text.strip()):
        raise ValueError("empty duration")
    sign = -1.0 if s.startswith("-") else 1.0
    s = s.lstrip("+-")
    if s == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(s):
        if not (m := _PART.match(s, pos)):
            raise ValueError(f"{text!r} is not a Go duration such as 90m, 1h30m or 24h")
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return sign * total
