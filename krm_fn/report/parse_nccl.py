r"""Read nccl-tests output (``all_reduce_perf`` and friends) into tables of rows.

Accepted, as seen in real logs:

* new format (``root`` column, ``#wrong`` counts, ``N/A`` without validation, counts in
  exponent form such as ``1.04858e+06``) and old format (no ``root``, an ``error`` column
  holding the maximum error as a float such as ``2e-07``, or ``N/A``);
* ``redop`` of ``sum``, ``none`` or empty (old ``alltoall``); columns of any width;
* launcher prefixes (``0: ``, ``[1,0]<stdout>:``, ``kubectl --timestamps``, pdsh ``host:``),
  ``+`` shell trace lines, ``NCCL INFO``/``WARN`` lines and ``...`` elisions inside a table;
* headers: ``# nccl-tests version``, ``# Collective test starting/concluded`` (the binary of an
  MPI build is named ``all_reduce_perf_mpi``: both ``_perf`` and ``_mpi`` are removed), ``# nThread``,
  ``#  Rank … on HOST device N [bus] NAME`` (with or without ``Group``), ``NCCL version``;
* footers ``# Out of bounds values : N OK|FAILED`` and ``# Avg bus bandwidth : X``;
* ``--datatype all`` / ``--op all`` (``-d all``, ``-o all``): one table whose size sweep restarts
  for every data type or reduction; each ``(type, redop)`` run is a *sweep* and its sizes are
  checked on their own;
* a row cut short by a failure on the same line (``2097152 32768 float none -1 node0: Test
  CUDA failure ...``): the row is left out; :mod:`krm_fn.report.detect_failures` reports the
  failure with its host.

The LogProfile's ``bandwidthResult`` regex is the row matcher: it is tried on every line
(after the launcher prefix is removed, which the built-in regex needs because it is anchored
at ``^\s*\d+``), and a row it matches is ``matched_by="profile"`` when its ``size``,
``algBW`` and ``busBW`` groups agree with the columns. Where the real logs need more than the
built-in regex, the column reader decides and the row is ``matched_by="fallback"``:

* the old format has no ``root`` column and an empty ``redop`` has no word, so the regex
  does not match those rows at all;
* worse, on an old-format row whose time is an integer (``13233``) the regex does match,
  taking the time for ``root``, busbw for ``algBW`` and the ``5`` of ``5e-07`` for ``busBW``;
  such rows are listed in ``regex_disagreements`` and read by their columns;
* the regex stops at busbw, so ``#wrong``, in-place values and the footer come from the
  column reader and the footer lines.

Invariants:
    * The parser reports; it never passes or fails a run. Problems (an unparsable row, a
      table without a footer) are listed with their line so the evaluator can fail closed.
    * Rows must follow the size progression of their sweep (a constant factor, or a constant
      increment); a gap not explained by a ``...`` elision is a problem, as is a line with
      control characters inside a table, a row interleaved with ``NCCL INFO`` output and a
      fragment of numbers that is no complete row.
    * A table is complete only when a footer line (``Out of bounds values`` or ``Avg bus
      bandwidth``) or ``Collective test concluded`` follows its rows in the same source.
    * The old ``error`` column is a maximum error, not a count: it is kept as ``error`` and
      never read as wrong results (the footer's out-of-bounds count is the verdict there).
    * A computed average (footer missing) is the mean of every out-of-place and in-place
      busbw, which is how nccl-tests computes its own, and is marked ``computed``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from krm_fn.report.loglines import LogLine
from krm_fn.report.logprofiles import CompiledPattern, LogProfile
from krm_fn.report.prefixes import Stripped, strip_host_prefix, strip_prefixes

__all__ = ["Measure", "NcclProblem", "NcclResult", "NcclRow", "NcclTable", "RankInfo", "parse_nccl"]


@dataclass(frozen=True)
class Measure:
    """One half of a row: out-of-place or in-place.

    Attributes:
        time_us: time per operation, microseconds.
        algbw: algorithm bandwidth, GB/s.
        busbw: bus bandwidth, GB/s.
        wrong: ``#wrong`` count (new format), ``None`` for ``N/A`` or the old format.
        error: the old format's maximum error, ``None`` otherwise or for ``N/A``.

    """

    time_us: float
    algbw: float
    busbw: float
    wrong: int | None
    error: float | None


@dataclass(frozen=True)
class NcclRow:
    """One row of results.

    Attributes:
        size: message size in bytes.
        count: element count.
        dtype: data type name (``float``).
        redop: reduction operation (``sum``, ``none``, or empty).
        root: the ``root`` column, ``None`` in the old format.
        out_of_place: the out-of-place measurement.
        in_place: the in-place measurement.
        source: the log file.
        line: 1-based line number.
        matched_by: ``profile`` when the LogProfile regex matched the line, else ``fallback``.

    """

    size: int
    count: int
    dtype: str
    redop: str
    root: int | None
    out_of_place: Measure
    in_place: Measure
    source: str
    line: int
    matched_by: Literal["profile", "fallback"]


@dataclass(frozen=True)
class NcclProblem:
    """Something in a table that keeps it from being trusted.

    Attributes:
        kind: ``unparsable-row``, ``garbled-line``, ``missing-rows``, ``no-footer``,
            ``no-rows``, ``bad-footer``.
        message: what is wrong.
        source: the log file.
        line: 1-based line number.

    """

    kind: str
    message: str
    source: str
    line: int


@dataclass
class NcclTable:
    """One results table: column header, rows, footer.

    Attributes:
        source: the log file.
        start_line: the column header's line, or the first row's when there is no header.
        has_header: whether a column header line was seen.
        format: ``new`` (``root`` and ``#wrong``) or ``old`` (``error``, no ``root``).
        rows: the rows in order.
        out_of_bounds: the footer's out-of-bounds count, ``None`` when missing.
        out_of_bounds_failed: the footer said ``FAILED``.
        avg_bus_bandwidth: the average bus bandwidth, GB/s.
        avg_source: ``footer``, ``computed`` or ``None`` (no rows).
        avg_check_failed: the footer's average carried ``FAILED`` (nccl-tests ``-G`` check).
        complete: a footer or ``Collective test concluded`` followed the rows.
        elisions: ``...`` lines inside the table.
        problems: what keeps the table from being trusted.
        regex_disagreements: lines where the profile regex matched but read other values than
            the columns (the built-in regex takes an old-format row's integer time for
            ``root``); the columns are used there.

    """

    source: str
    start_line: int
    has_header: bool
    format: Literal["new", "old"] = "new"
    has_root: bool | None = None
    columns: int | None = None
    rows: list[NcclRow] = field(default_factory=list)
    out_of_bounds: int | None = None
    out_of_bounds_failed: bool = False
    avg_bus_bandwidth: float | None = None
    avg_source: Literal["footer", "computed"] | None = None
    avg_check_failed: bool = False
    complete: bool = False
    elisions: int = 0
    problems: list[NcclProblem] = field(default_factory=list)
    regex_disagreements: list[int] = field(default_factory=list)

    @property
    def validation(self) -> bool | None:
        """Whether results were checked: ``False`` when every row says ``N/A``."""
        if not self.rows:
            return None
        if self.format == "old":
            return any(r.out_of_place.error is not None for r in self.rows)
        return any(r.out_of_place.wrong is not None for r in self.rows)

    @property
    def peak_busbw(self) -> float | None:
        """Highest out-of-place busbw over the rows."""
        return max((r.out_of_place.busbw for r in self.rows), default=None)

    @property
    def peak_algbw(self) -> float | None:
        """Highest out-of-place algbw over the rows."""
        return max((r.out_of_place.algbw for r in self.rows), default=None)

    @property
    def sweeps(self) -> list[list[NcclRow]]:
        """The rows cut where the data type or reduction changes (``-d all``/``-o all``)."""
        runs: list[list[NcclRow]] = []
        for row in self.rows:
            if runs and (runs[-1][-1].dtype, runs[-1][-1].redop) == (row.dtype, row.redop):
                runs[-1].append(row)
            else:
                runs.append([row])
        return runs

    @property
    def wrong_rows(self) -> list[NcclRow]:
        """Rows with a non-zero ``#wrong`` count, out-of-place or in-place."""
        return [
            r for r in self.rows if (r.out_of_place.wrong or 0) > 0 or (r.in_place.wrong or 0) > 0
        ]


@dataclass(frozen=True)
class RankInfo:
    """A ``# Rank`` line of the header.

    Attributes:
        rank: the rank number.
        host: the host name it ran on.
        device: the CUDA device index.
        bus_id: the PCI id in brackets.
        gpu: the device name.

    """

    rank: int
    host: str
    device: int
    bus_id: str
    gpu: str


@dataclass
class NcclResult:
    """Everything read from an nccl-tests log.

    Attributes:
        tables: the results tables, in order.
        tests_version: ``# nccl-tests version`` when printed.
        nccl_version: ``NCCL version`` when printed.
        collective: the collective, e.g. ``all_reduce``, when the log names the binary.
        parameters: the ``# nThread`` line's fields (``minBytes``, ``maxBytes``, …).
        ranks: the ``# Rank`` lines.
        transports: networks named by ``NCCL INFO Using network``.
        problems: problems outside any table (rows before any header that do not parse).

    """

    tables: list[NcclTable] = field(default_factory=list)
    tests_version: str | None = None
    nccl_version: str | None = None
    collective: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)
    ranks: list[RankInfo] = field(default_factory=list)
    transports: list[str] = field(default_factory=list)
    problems: list[NcclProblem] = field(default_factory=list)

    @property
    def hosts(self) -> list[str]:
        """Distinct hosts of the ``# Rank`` lines, in order."""
        return list(dict.fromkeys(r.host for r in self.ranks))

    @property
    def gpus(self) -> list[str]:
        """Distinct device names of the ``# Rank`` lines, in order."""
        return list(dict.fromkeys(r.gpu for r in self.ranks))

    @property
    def rows(self) -> list[NcclRow]:
        """Every row of every table."""
        return [row for table in self.tables for row in table.rows]


_HEADER_RE = re.compile(r"^#\s*size\s+count\s+type\b")
_NTHREAD_RE = re.compile(r"^#\s*nThread\b")
_KV_RE = re.compile(r"(\w[\w ]*?):?\s+(\S+)")
_RANK_RE = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)(?:\s+Group\s+\d+)?\s+Pid\s+\d+\s+on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s+(?P<gpu>.+?)\s*$"
)
_TESTS_VERSION_RE = re.compile(r"^#\s*nccl-tests version (?P<version>\S+)")
_STARTING_RE = re.compile(r"^#\s*Collective test starting:\s*(?P<binary>\S+)")
_FAILURE_IN_ROW_RE = re.compile(
    r"\s(?:[A-Za-z0-9][\w.-]*:\s+)?Test (?:NCCL|CUDA) failure\b|\s\.\. \S+ .*Test failure\b"
)
_FRAGMENT_RE = re.compile(
    r"^\s*(?:(?:-?[\d.]+(?:e[+-]?\d+)?|N/A)\s+)+(?:-?[\d.]+(?:e[+-]?\d+)?|N/A)\s*$"
)
_ROW_START_RE = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z_]\w*\b")
_CONCLUDED_RE = re.compile(r"^#\s*Collective test concluded:\s*(?P<binary>\S+)")
_NCCL_VERSION_RE = re.compile(r"\bNCCL version (?P<version>\S+)")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\S+)\s*(?P<verdict>OK|FAILED)?")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S+)\s*(?P<verdict>OK|FAILED)?")
_BINARY_RE = re.compile(r"\b(?P<name>[a-z][a-z_]*[a-z])_perf(?:_mpi)?\b")
_ROW_LIKE_RE = re.compile(r"^\s*\d+(?:\s+\d+|\s*$)")
_WORD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT_RE = re.compile(r"^-?\d+$")
_GARBLED_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffd]")
_DEFAULT_TRANSPORT_RE = re.compile(r"NCCL INFO Using network (?P<transport>.+)")
_NTHREAD_FIELDS = re.compile(
    r"(nThread|nGpus|minBytes|maxBytes|step:|warmup iters:|iters:|agg iters:|validation:|"
    r"graph:|unalign:)\s*(\S+)"
)


def _number(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {token!r}")
    return value


def _measure(tokens: list[str], old_format: bool) -> Measure:
    time_us, algbw, busbw = (_number(t) for t in tokens[:3])
    marker = tokens[3]
    if marker == "N/A":
        return Measure(time_us, algbw, busbw, None, None)
    value = _number(marker)
    if old_format:
        return Measure(time_us, algbw, busbw, None, value)
    return Measure(time_us, algbw, busbw, round(value), None)


@dataclass(frozen=True)
class _Columns:
    size: int
    count: int
    dtype: str
    redop: str
    root: int | None
    out_of_place: Measure
    in_place: Measure


def _read_columns(text: str, table: NcclTable | None) -> _Columns:
    """Read a row by its whitespace-separated columns; raises ValueError when it is not one."""
    tokens = text.split()
    if len(tokens) < 11:
        raise ValueError(f"expected at least 11 columns, found {len(tokens)}")
    if not (_INT_RE.match(tokens[0]) and _INT_RE.match(tokens[1])):
        raise ValueError("size and count must be integers")
    if not _WORD_RE.match(tokens[2]):
        raise ValueError(f"type {tokens[2]!r} is not a type name")
    rest = tokens[3:]
    redop = rest.pop(0) if _WORD_RE.match(rest[0]) else ""
    has_root = table.has_root if table is not None and table.has_root is not None else None
    if has_root is None:
        has_root = len(rest) == 9
    root: int | None = None
    if has_root:
        if not rest or not _INT_RE.match(rest[0]):
            raise ValueError("root column is not an integer")
        root = int(rest.pop(0))
    if len(rest) != 8:
        raise ValueError(f"expected 8 measurement columns, found {len(rest)}")
    old = table is not None and table.format == "old"
    return _Columns(
        int(tokens[0]),
        int(tokens[1]),
        tokens[2],
        redop,
        root,
        _measure(rest[:4], old),
        _measure(rest[4:], old),
    )


def _unparsable_row(line: LogLine, body: str, err: ValueError) -> NcclProblem:
    """A row-like line inside a table whose columns do not read, quoting its start."""
    return NcclProblem(
        "unparsable-row",
        f"unparsable results row ({err}): {body.strip()[:120]!r}",
        line.source,
        line.number,
    )


def _regex_agrees(match: re.Match[str], pattern: CompiledPattern, columns: _Columns) -> bool:
    """Whether the profile's ``bandwidthResult`` regex read the same size, busbw and algbw.

    Args:
        match: the regex's match on the row.
        pattern: the compiled pattern (its unit scales).
        columns: the row read by its columns.

    Returns:
        ``True`` when size is equal and both bandwidths agree to 1e-9.

    """
    groups = match.groupdict()
    out_of_place = columns.out_of_place
    regex_size = round(float(groups["size"]) * pattern.scale("size"))
    regex_busbw = float(groups["busBW"]) * pattern.scale("busBW")
    regex_algbw = out_of_place.algbw
    if groups.get("algBW") is not None:
        regex_algbw = float(groups["algBW"]) * pattern.scale("algBW")
    return (
        regex_size == columns.size
        and math.isclose(regex_busbw, out_of_place.busbw, rel_tol=1e-9, abs_tol=1e-9)
        and math.isclose(regex_algbw, out_of_place.algbw, rel_tol=1e-9, abs_tol=1e-9)
    )


def _strip(line: LogLine) -> Stripped:
    stripped = strip_prefixes(line.text)
    body = stripped.text
    if body.lstrip().startswith("#") or _ROW_LIKE_RE.match(body):
        return stripped
    hosted = strip_host_prefix(stripped)
    if hosted is not stripped and (
        hosted.text.lstrip().startswith("#") or _ROW_LIKE_RE.match(hosted.text)
    ):
        return hosted
    return stripped


def _gaps(table: NcclTable) -> list[NcclProblem]:
    """Rows missing from the size progression of each sweep (``-d all`` restarts per type)."""
    return [problem for sweep in table.sweeps for problem in _sweep_gaps(sweep)]


def _sweep_gaps(rows: list[NcclRow]) -> list[NcclProblem]:
    """Rows missing from one size progression (every step a constant factor or increment)."""
    sizes = [(r.size, r) for r in rows if r.size > 0]
    pairs = [(a, b) for a, b in itertools.pairwise(sizes) if a[0] != b[0]]
    if len(pairs) < 2:
        return []
    ratios = Counter(round(b[0] / a[0], 6) for a, b in pairs)
    steps = Counter(b[0] - a[0] for a, b in pairs)
    if len(ratios) == 1 or len(steps) == 1:
        return []
    ratio = ratios.most_common(1)[0][0]
    problems: list[NcclProblem] = []
    for (size_a, _), (size_b, row_b) in pairs:
        if round(size_b / size_a, 6) != ratio:
            problems.append(
                NcclProblem(
                    "missing-rows",
                    f"rows missing or out of order between sizes {size_a} and {size_b} "
                    f"(the table steps by x{ratio:g})",
                    row_b.source,
                    row_b.line,
                )
            )
    return problems


class _Reader:
    def __init__(self, profile: LogProfile) -> None:
        self.result = NcclResult()
        bandwidth = profile.pattern("bandwidthResult")
        if bandwidth is None:
            raise ValueError(f"LogProfile {profile.name!r} has no bandwidthResult pattern")
        self.row_pattern: CompiledPattern = bandwidth
        transport = profile.pattern("networkTransport")
        self.transport_re = transport.pattern if transport else _DEFAULT_TRANSPORT_RE
        self.table: NcclTable | None = None
        self.source: str | None = None

    def close_open_table(self) -> None:
        self.table = None

    def header(self, line: LogLine, body: str) -> None:
        names = body.lstrip("#").split()
        table = NcclTable(line.source, line.number, True)
        table.has_root = "root" in names
        table.format = "old" if "error" in names and "#wrong" not in names else "new"
        table.columns = len(names)
        self.result.tables.append(table)
        self.table = table

    def row(self, line: LogLine, body: str) -> bool:
        """Read a results row into the open table, opening one for a row without a header.

        Args:
            line: the log line.
            body: the line without its prefixes.

        Returns:
            Whether the line is a row: read, recorded as unparsable, or cut by a failure.

        """
        cut = _FAILURE_IN_ROW_RE.search(body)
        if cut is not None and _ROW_START_RE.match(body[: cut.start()]):
            # A row cut short by a failure message; detect_failures reports the failure.
            return True
        match = self.row_pattern.pattern.search(body)
        if match is None and not _ROW_LIKE_RE.match(body):
            return False
        table = self.table
        if table is None or table.complete:
            table = self.open_headerless_table(line, body)
            if table is None:
                return False
        try:
            columns = _read_columns(body, table)
        except ValueError as err:
            table.problems.append(_unparsable_row(line, body, err))
            return True
        matched_by: Literal["profile", "fallback"] = "fallback"
        if match is not None:
            if _regex_agrees(match, self.row_pattern, columns):
                matched_by = "profile"
            else:
                table.regex_disagreements.append(line.number)
        table.rows.append(
            NcclRow(
                columns.size,
                columns.count,
                columns.dtype,
                columns.redop,
                columns.root,
                columns.out_of_place,
                columns.in_place,
                line.source,
                line.number,
                matched_by,
            )
        )
        return True

    def open_headerless_table(self, line: LogLine, body: str) -> NcclTable | None:
        """Open a table at a well-formed row outside any open table (its header is missing).

        Returns:
            The new table, or ``None`` when the line does not read as a row.

        """
        try:
            probe = _read_columns(body, None)
        except ValueError:
            return None
        table = NcclTable(line.source, line.number, False)
        table.has_root = probe.root is not None
        table.format = "new" if table.has_root else "old"
        self.result.tables.append(table)
        self.table = table
        return table

    def footer(self, line: LogLine, body: str) -> bool:
        oob = _OOB_RE.match(body)
        avg = _AVG_RE.match(body)
        if oob is None and avg is None:
            return False
        table = self.table or (self.result.tables[-1] if self.result.tables else None)
        if table is None:
            self.result.problems.append(
                NcclProblem(
                    "bad-footer", "footer without a results table", line.source, line.number
                )
            )
            return True
        table.complete = True
        try:
            if oob is not None:
                table.out_of_bounds = int(oob.group("count"))
                table.out_of_bounds_failed = oob.group("verdict") == "FAILED"
            elif avg is not None:
                table.avg_bus_bandwidth = _number(avg.group("value"))
                table.avg_source = "footer"
                table.avg_check_failed = avg.group("verdict") == "FAILED"
        except ValueError:
            table.problems.append(
                NcclProblem(
                    "bad-footer", f"unreadable footer {body.strip()!r}", line.source, line.number
                )
            )
        return True

    def feed(self, line: LogLine) -> None:
        if line.source != self.source:
            self.source = line.source
            self.close_open_table()
        raw = line.text
        transport = self.transport_re.search(raw)
        if transport is not None:
            name = transport.group("transport").strip()
            if name not in self.result.transports:
                self.result.transports.append(name)
            return
        version = _NCCL_VERSION_RE.search(raw)
        if version is not None and self.result.nccl_version is None:
            self.result.nccl_version = version.group("version")
        if "NCCL INFO" in raw or "NCCL WARN" in raw:
            self.interleaved(line)
            return
        stripped = _strip(line)
        body = stripped.text
        if body.startswith("+ ") or "_perf" in body:
            binary = _BINARY_RE.search(body)
            if binary is not None and self.result.collective is None:
                self.result.collective = binary.group("name")
        if body.strip() == "...":
            if self.table is not None and not self.table.complete:
                self.table.elisions += 1
            return
        if body.lstrip().startswith("#"):
            self.comment(line, body.strip())
            return
        table = self.table
        if self.row(line, body) or table is None or table.complete:
            return
        if _FRAGMENT_RE.match(body):
            table.problems.append(
                NcclProblem(
                    "unparsable-row",
                    f"fragment of a results row inside the table: {body.strip()[:80]!r}",
                    line.source,
                    line.number,
                )
            )
        elif _GARBLED_RE.search(body):
            table.problems.append(
                NcclProblem(
                    "garbled-line",
                    f"garbled line inside the results table: {body.strip()[:80]!r}",
                    line.source,
                    line.number,
                )
            )

    def interleaved(self, line: LogLine) -> None:
        """An ``NCCL INFO``/``WARN`` line that starts with the beginning of a results row."""
        table = self.table
        body = _strip(line).text
        if _ROW_START_RE.match(body):
            problems = self.result.problems if table is None or table.complete else table.problems
            problems.append(
                NcclProblem(
                    "garbled-line",
                    "results row interleaved with NCCL output (its values cannot be trusted): "
                    f"{body.strip()[:100]!r}",
                    line.source,
                    line.number,
                )
            )

    def comment(self, line: LogLine, body: str) -> None:
        if _HEADER_RE.match(body):
            self.header(line, body)
            return
        if self.footer(line, body):
            return
        if (found := _RANK_RE.match(body)) is not None:
            self.result.ranks.append(
                RankInfo(
                    int(found.group("rank")),
                    found.group("host"),
                    int(found.group("device")),
                    found.group("bus"),
                    found.group("gpu"),
                )
            )
        elif (found := _TESTS_VERSION_RE.match(body)) is not None:
            self.result.tests_version = found.group("version")
        elif (found := _STARTING_RE.match(body)) is not None:
            binary = found.group("binary").removesuffix("_mpi").removesuffix("_perf")
            self.result.collective = binary
        elif (found := _CONCLUDED_RE.match(body)) is not None:
            if self.result.tables:
                self.result.tables[-1].complete = True
        elif _NTHREAD_RE.match(body):
            for key, value in _NTHREAD_FIELDS.findall(body):
                self.result.parameters[key.rstrip(":").replace(" ", "_")] = value

    def finish(self) -> NcclResult:
        for table in self.result.tables:
            if not table.elisions:
                table.problems.extend(_gaps(table))
            if not table.rows and not table.problems:
                table.problems.append(
                    NcclProblem(
                        "no-rows",
                        f"results table at line {table.start_line} has no rows",
                        table.source,
                        table.start_line,
                    )
                )
            if table.rows and not table.complete:
                last = table.rows[-1]
                table.problems.append(
                    NcclProblem(
                        "no-footer",
                        f"results table at line {table.start_line} has no footer "
                        "('# Out of bounds values' or '# Avg bus bandwidth') after its last row "
                        f"(line {last.line}, size {last.size}): the log is truncated or the "
                        "test did not finish",
                        table.source,
                        last.line,
                    )
                )
            if table.avg_bus_bandwidth is None and table.rows:
                values = [r.out_of_place.busbw for r in table.rows]
                values += [r.in_place.busbw for r in table.rows]
                table.avg_bus_bandwidth = sum(values) / len(values)
                table.avg_source = "computed"
        return self.result


def parse_nccl(lines: Iterable[LogLine], profile: LogProfile) -> NcclResult:
    """Parse nccl-tests output.

    Args:
        lines: the log lines, in order (several sources may follow one another; a table never
            continues across sources).
        profile: the LogProfile whose ``bandwidthResult`` (and ``networkTransport``) patterns
            to use.

    Returns:
        Tables, header facts and problems.

    Raises:
        ValueError: the profile has no ``bandwidthResult`` pattern.

    """
    reader = _Reader(profile)
    for line in lines:
        reader.feed(line)
    return reader.finish()
