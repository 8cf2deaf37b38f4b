"""Match log files to TrainJobs (the rules, in precedence order, are in docs/report.md).

gzip data is recognised by its magic bytes whatever the name; ANSI codes are removed when a
log is read. Without rendered objects (:func:`collect_alone`) every file is a group of its own.

Invariants:
    * Matching is by exact name (``group-1`` never takes ``group-1-overflow``'s logs); text
      matching no TrainJob is unmatched, never guessed, except that the only TrainJob and
      the only log belong together whatever the file is called.
    * A TrainJob's logs keep the order of the ``--logs`` arguments, then sorted paths;
      hidden entries are skipped; every directory is read once, symlinked or not.
    * Undecodable bytes are replaced, so a garbled log is judged rather than crashing.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from krm_fn.report.loglines import LogSource
from krm_fn.report.prefixes import strip_ansi

_SECTION_RE = re.compile(r"^#\s*trainjob:\s*(?P<name>\S+)\s*$", re.IGNORECASE)
_SUFFIXES = (".log", ".txt")
_GZIP_MAGIC = b"\x1f\x8b"
_POD_KINDS = ("launcher", "node")


@dataclass
class LogIndex:
    """Logs by TrainJob name; the labels (``path[:line]``) and sources that matched no TrainJob."""

    by_trainjob: dict[str, list[LogSource]] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)
    unmatched_sources: list[LogSource] = field(default_factory=list)

    def add(self, name: str, source: LogSource) -> None:
        """Record ``source`` as a log of ``name``."""
        self.by_trainjob.setdefault(name, []).append(source)


def _stem(path: Path) -> str | None:
    """The file name without ``.log``/``.txt`` (and ``.gz``), or ``None`` for other files."""
    name = path.name.removesuffix(".gz")
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def _name_from_file(path: Path, names: set[str]) -> str | None:
    stem = _stem(path)
    if stem is None or stem in names:
        return stem
    pods = [n for n in names for k in _POD_KINDS if f"{stem}-".startswith(f"{n}-{k}-")]
    return max(pods, key=len, default=None)


def _split(label: str, text: str, fallback: str | None, names: set[str], index: LogIndex) -> None:
    """Cut ``text`` at ``# trainjob:`` lines and file each part."""
    lines = text.splitlines()
    sections = [(i, found) for i, line in enumerate(lines) if (found := _SECTION_RE.match(line))]
    starts = [i for i, _ in sections]
    head = lines[: starts[0]] if starts else lines
    if any(line.strip() for line in head):
        source = LogSource.from_text(label, "\n".join(head))
        if fallback is not None:
            index.add(fallback, source)
        else:
            index.unmatched.append(label)
            index.unmatched_sources.append(source)
    for (start, found), end in zip(sections, [*starts[1:], len(lines)], strict=False):
        name = found.group("name")
        body = "\n".join(lines[start + 1 : end])
        source = LogSource.from_text(label, body, first_line=start + 2)
        if name in names:
            index.add(name, source)
        else:
            index.unmatched.append(f"{label}:{start + 1} (# trainjob: {name})")


def _read(path: Path) -> str:
    """The text of a log, gunzipped, without ANSI codes (``OSError`` for corrupt gzip data)."""
    data = path.read_bytes()
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (EOFError, zlib.error, gzip.BadGzipFile) as err:
            raise OSError(f"{path}: unreadable gzip data ({err})") from None
    return strip_ansi(data.decode("utf-8", errors="replace"))


def _files(directory: Path) -> Iterator[tuple[Path, tuple[str, ...]]]:
    """Every file under ``directory``, sorted, with the directory names leading to it.

    Hidden entries are skipped; a symlinked directory is followed, but each real directory
    is read once (a link back up the tree is not a second copy of its logs).
    """
    seen: set[Path] = set()

    def walk(where: Path, parents: tuple[str, ...]) -> Iterator[tuple[Path, tuple[str, ...]]]:
        if where.resolve() in seen:
            return
        seen.add(where.resolve())
        for entry in sorted(where.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                yield from walk(entry, (*parents, entry.name))
            elif entry.is_file():
                yield entry, parents

    return walk(directory, ())


def _walk(directory: Path, owner: str | None, names: set[str], index: LogIndex) -> None:
    for entry, parents in _files(directory):
        name = owner or next((d for d in parents if d in names), None)
        name = name or _name_from_file(entry, names)
        _split(str(entry), _read(entry), name, names, index)


def collect_logs(paths: Sequence[str], names: Iterable[str], stdin_text: str | None) -> LogIndex:
    """Match the ``--logs`` values (``-``: ``stdin_text``) to TrainJob names."""
    known = set(names)
    index = LogIndex()
    for raw in paths:
        if raw == "-":
            _split("<stdin>", strip_ansi(stdin_text or ""), None, known, index)
            continue
        path = Path(raw)
        if path.is_dir():
            _walk(path, path.name if path.name in known else None, known, index)
        elif path.is_file():
            _split(str(path), _read(path), _name_from_file(path, known), known, index)
        else:
            raise FileNotFoundError(raw)
    if len(known) == 1 and not index.by_trainjob and len(index.unmatched_sources) == 1:
        index.add(next(iter(known)), index.unmatched_sources.pop())
        index.unmatched.clear()
    return index


def collect_alone(paths: Sequence[str], stdin_text: str | None) -> LogIndex:
    """Every log alone, named by its stem (its path when stems clash; ``stdin`` for ``-``)."""
    found: list[tuple[str, str, str]] = []
    for raw in paths:
        if raw == "-":
            found.append(("stdin", "<stdin>", strip_ansi(stdin_text or "")))
            continue
        path = Path(raw)
        files = [f for f, _ in _files(path)] if path.is_dir() else [path]
        found += [(_stem(file) or file.name, str(file), _read(file)) for file in files]
    stems = Counter(stem for stem, _, _ in found)
    index = LogIndex()
    for stem, label, text in found:
        index.add(stem if stems[stem] == 1 else label, LogSource.from_text(label, text))
    return index


def measurement_sources(sources: Sequence[LogSource], replicated_job: str) -> list[LogSource]:
    """The pod logs of ``replicated_job`` (``NAME-launcher-…``, ``-launcher.log``), else all."""
    marker = f"-{replicated_job}-"
    chosen = [s for s in sources if marker in f"{_stem(Path(s.name)) or Path(s.name).name}-"]
    return chosen or list(sources)
