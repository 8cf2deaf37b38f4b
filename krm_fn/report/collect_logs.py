"""Match log files to TrainJobs.

Each ``--logs PATH`` is a file, a directory, or ``-`` (standard input). A log belongs to the
TrainJob ``NAME`` when, in this order of precedence:

1. a line ``# trainjob: NAME`` precedes it: such a line starts a section that runs to the
   next such line or the end of the file (one file, or stdin, can hold many TrainJobs);
2. its file is ``NAME.log`` or ``NAME.txt``;
3. it lies under a directory ``NAME/`` (every file below it, in sorted order);
4. its file is a pod log of the TrainJob, ``NAME-launcher…`` or ``NAME-node…`` (``.log`` or
   ``.txt``): ``NAME-launcher.log`` as users save ``kubectl logs job/NAME-launcher``, or
   ``NAME-launcher-0-0-abcde.log`` with the pod's suffix.

Every name may also end in ``.gz`` (``NAME.log.gz``); gzip content is recognised by its magic
bytes whatever the name (a ``.log`` that holds gzip data is decompressed, not read as text).
ANSI colour codes are removed when a log is read (:func:`~krm_fn.report.prefixes.strip_ansi`);
``kubectl logs --prefix`` and ``--timestamps`` prefixes are removed line by line by the parsers.

Directories are walked recursively in sorted order; hidden entries (``.name``) are skipped.
Text that matches no TrainJob is reported as unmatched, never guessed, except when there is
exactly one TrainJob and exactly one log: they belong together whatever the file is called.
Without rendered objects (:func:`collect_alone`) every file is a group of its own.

Invariants:
    * A TrainJob's logs keep the order of the ``--logs`` arguments, then sorted paths.
    * Files are read as UTF-8 with undecodable bytes replaced, so a garbled log is still
      read (and judged) rather than crashing the command.
    * Matching is by exact name; ``group-1`` never takes the logs of ``group-1-overflow``.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from krm_fn.report.loglines import LogSource
from krm_fn.report.prefixes import strip_ansi

__all__ = ["LogIndex", "collect_alone", "collect_logs", "measurement_sources"]

_SECTION_RE = re.compile(r"^#\s*trainjob:\s*(?P<name>\S+)\s*$", re.IGNORECASE)
_SUFFIXES = (".log", ".txt")
_GZIP_MAGIC = b"\x1f\x8b"
_POD_KINDS = ("launcher", "node")


@dataclass
class LogIndex:
    """Logs by TrainJob name.

    Attributes:
        by_trainjob: the sources of each TrainJob, in order.
        unmatched: sources (paths, or ``path:line`` for sections) that matched no TrainJob.

    """

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
    if stem is None:
        return None
    if stem in names:
        return stem
    candidates = [
        name
        for name in names
        for kind in _POD_KINDS
        if stem == f"{name}-{kind}" or stem.startswith(f"{name}-{kind}-")
    ]
    return max(candidates, key=len) if candidates else None


def _split(label: str, text: str, fallback: str | None, names: set[str], index: LogIndex) -> None:
    """Cut ``text`` at ``# trainjob:`` lines and file each part."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _SECTION_RE.match(line)]
    head = lines[: starts[0]] if starts else lines
    if any(line.strip() for line in head):
        body = "\n".join(head)
        if fallback is not None:
            index.add(fallback, LogSource.from_text(label, body))
        else:
            index.unmatched.append(label)
            index.unmatched_sources.append(LogSource.from_text(label, body))
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        found = _SECTION_RE.match(lines[start])
        if found is None:  # pragma: no cover - starts holds only matching lines
            continue
        name = found.group("name")
        body = "\n".join(lines[start + 1 : end])
        source = LogSource.from_text(label, body, first_line=start + 2)
        if name in names:
            index.add(name, source)
        else:
            index.unmatched.append(f"{label}:{start + 1} (# trainjob: {name})")


def _read(path: Path) -> str:
    """The text of a log: gunzipped when it holds gzip data, without ANSI escape codes.

    Raises:
        OSError: the file cannot be read, or its gzip data is corrupt or cut short.

    """
    data = path.read_bytes()
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (EOFError, zlib.error, gzip.BadGzipFile) as err:
            raise OSError(f"{path}: unreadable gzip data ({err})") from None
    return strip_ansi(data.decode("utf-8", errors="replace"))


def _walk(directory: Path, owner: str | None, names: set[str], index: LogIndex) -> None:
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            _walk(entry, owner or (entry.name if entry.name in names else None), names, index)
        elif entry.is_file():
            name = owner or _name_from_file(entry, names)
            _split(str(entry), _read(entry), name, names, index)


def collect_logs(paths: Sequence[str], names: Iterable[str], stdin_text: str | None) -> LogIndex:
    """Match the ``--logs`` arguments to TrainJob names.

    Args:
        paths: the ``--logs`` values; ``-`` means standard input.
        names: the TrainJob names of the rendered input.
        stdin_text: the content of standard input when a path is ``-``.

    Returns:
        The logs of each TrainJob, and what matched nothing.

    Raises:
        FileNotFoundError: a path does not exist.

    """
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
    """Every log read on its own, without TrainJobs: one group per file, named by its stem.

    Args:
        paths: the ``--logs`` values; ``-`` means standard input (named ``stdin``).
        stdin_text: the content of standard input when a path is ``-``.

    Returns:
        The logs by group name (a stem that two files share is told apart by its path).

    Raises:
        FileNotFoundError: a path does not exist.

    """
    found: list[tuple[str, str, str]] = []
    for raw in paths:
        if raw == "-":
            found.append(("stdin", "<stdin>", strip_ansi(stdin_text or "")))
            continue
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(raw)
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if not any(part.startswith(".") for part in file.relative_to(path).parts):
                found.append((_stem(file) or file.name, str(file), _read(file)))
    stems = Counter(stem for stem, _, _ in found)
    index = LogIndex()
    for stem, label, text in found:
        index.add(stem if stems[stem] == 1 else label, LogSource.from_text(label, text))
    return index


def measurement_sources(sources: Sequence[LogSource], replicated_job: str) -> list[LogSource]:
    """The sources that carry the measurement, by the profile's ``replicatedJobName``.

    Pod logs are named ``<trainjob>-<replicatedJob>-<n>-<m>-<hash>`` (or saved as
    ``<trainjob>-<replicatedJob>.log``); when some sources' file names contain
    ``-<replicatedJobName>-`` or end with ``-<replicatedJobName>`` (before ``.log``/``.txt``
    and ``.gz``), only those are parsed for the measurement (every source is still scanned
    for failures). Otherwise all sources are used.

    Args:
        sources: a TrainJob's logs.
        replicated_job: the profile's ``workerStrategy.replicatedJobName``.

    Returns:
        The sources to parse for the measurement.

    """
    marker = f"-{replicated_job}-"
    chosen = [
        s
        for s in sources
        if marker in Path(s.name).name or marker in f"{_stem(Path(s.name)) or ''}-"
    ]
    return chosen or list(sources)
