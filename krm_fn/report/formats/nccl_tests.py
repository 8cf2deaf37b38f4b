r"""nccl-tests output (``all_reduce_perf`` and friends): tables, ranks, and their verdict.

What is read, as real logs print it (both table formats, launcher prefixes, elisions,
headers and footers with or without ``#``, ``-d all``/``-o all`` sweeps), is listed in
docs/report.md. The LogProfile's ``bandwidthResult`` regex is the row matcher; a row is
``matched_by="profile"`` when its groups agree with the columns, else the column reader
decides (``fallback``: the old format has no ``root``, and the regex stops at busbw).

Invariants:
    * :func:`parse_nccl` reports; :func:`judge` makes a table, a coverage gap or another
      collective a failure.
    * Rows follow their sweep's size progression (a constant factor or step); a gap not
      explained by ``...``, control characters, a row interleaved with ``NCCL INFO`` output
      and a fragment of numbers are problems.
    * A table is complete only when a footer or ``Collective test concluded`` follows it.
    * The old ``error`` column is a maximum error, never a count of wrong results.
    * A computed average (no footer) is the mean busbw of both halves of every row, as
      nccl-tests computes its own.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence

from krm_fn.report.format_values import human_bytes
from krm_fn.report.formats import LogFormat, Metric
from krm_fn.report.load_rendered import GroupSpec
from krm_fn.report.loglines import LogLine
from krm_fn.report.logprofiles import BUILTIN_PROFILES, CompiledPattern, LogProfile
from krm_fn.report.model import Bandwidth, Failure, GroupReport, Measure, Rank, Reason, Row, Table
from krm_fn.report.prefixes import Stripped, same_host, strip_host_prefix, strip_prefixes

_HEADER_RE = re.compile(r"^\s*#?\s*size\s+count\s+type\b")
_BARE_COMMENT_RE = re.compile(
    r"^\s*(?:Rank\s+\d|size\s+count\s+type\b|Out of bounds values|Avg bus bandwidth|"
    r"nThread\s|Collective test|nccl-tests version)"
)
_RANK_RE = re.compile(
    r"^Rank\s+(?P<rank>\d+)(?:\s+Group\s+\d+)?(?:\s+Pid\s+\d+)?\s+on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s+(?P<gpu>.+?)\s*$"
)
_TESTS_VERSION_RE = re.compile(r"^nccl-tests version (?P<version>\S+)")
_STARTING_RE = re.compile(r"^Collective test starting:\s*(?P<binary>\S+)")
_CONCLUDED_RE = re.compile(r"^Collective test concluded:")
_FAILURE_IN_ROW_RE = re.compile(
    r"\s(?:[A-Za-z0-9][\w.-]*:\s+)?Test (?:NCCL|CUDA) failure\b|\s\.\. \S+ .*Test failure\b"
)
_FRAGMENT_RE = re.compile(
    r"^\s*(?:(?:-?[\d.]+(?:e[+-]?\d+)?|N/A)\s+)+(?:-?[\d.]+(?:e[+-]?\d+)?|N/A)\s*$"
)
_ROW_START_RE = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z_]\w*\b")
_TYPES = r"(?:u?int(?:8|32|64)|half|float|double|bfloat16|f8e[45]m[23])"
_TYPE_WORD_RE = re.compile(f" {_TYPES} ")
"""A data type between spaces: a results row has one, an ``NCCL INFO`` line rarely."""
_MARKS = ("Avg bus bandwidth", "Out of bounds values", "Collective test starting", "nThread ")
"""Lines only nccl-tests prints (its footers and headers)."""
_TYPED_ROW_RE = re.compile(rf"^\s*\d+\s+\d+\s+{_TYPES}\s")
_NCCL_VERSION_RE = re.compile(r"\bNCCL version (?P<version>\S+)")
_OOB_RE = re.compile(r"^Out of bounds values\s*:\s*(?P<count>\S+)\s*(?P<verdict>OK|FAILED)?")
_AVG_RE = re.compile(
    r"^Avg bus bandwidth\s*:\s*(?P<value>\S+)\s*(?:GB/s\s*)?(?P<verdict>OK|FAILED)?"
)
_BINARY_RE = re.compile(r"\b(?P<name>[a-z][a-z_]*[a-z])_perf(?:_mpi)?\b")
_ROW_LIKE_RE = re.compile(r"^\s*\d+(?:\s+\d+|\s*$)")
_WORD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT_RE = re.compile(r"^-?\d+$")
_GARBLED_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffd]")
_DEFAULT_TRANSPORT = BUILTIN_PROFILES["nccl-bandwidth"].patterns["networkTransport"]
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
    marker = None if tokens[3] == "N/A" else _number(tokens[3])
    wrong = round(marker) if marker is not None and not old_format else None
    error = marker if old_format else None
    return Measure(
        time_us=time_us, alg_bw_g_bps=algbw, bus_bw_g_bps=busbw, wrong=wrong, error=error
    )


def _read_row(text: str, table: Table | None, line: LogLine) -> Row:
    """Read a row by its whitespace-separated columns; ``ValueError`` when it is not one."""
    tokens = text.split()
    if len(tokens) < 11:
        raise ValueError(f"expected at least 11 columns, found {len(tokens)}")
    if not (_INT_RE.match(tokens[0]) and _INT_RE.match(tokens[1])):
        raise ValueError("size and count must be integers")
    if not _WORD_RE.match(tokens[2]):
        raise ValueError(f"type {tokens[2]!r} is not a type name")
    rest = tokens[3:]
    redop = rest.pop(0) if _WORD_RE.match(rest[0]) else ""
    known = table.has_root if table is not None else None
    has_root = len(rest) == 9 if known is None else known
    root: int | None = None
    if has_root:
        if not rest or not _INT_RE.match(rest[0]):
            raise ValueError("root column is not an integer")
        root = int(rest.pop(0))
    if len(rest) != 8:
        raise ValueError(f"expected 8 measurement columns, found {len(rest)}")
    old = table is not None and table.format == "old"
    return Row(
        size_bytes=int(tokens[0]), count=int(tokens[1]), type=tokens[2], redop=redop, root=root,
        out_of_place=_measure(rest[:4], old), in_place=_measure(rest[4:], old),
        line=line.number, matched_by="fallback", source=line.source,
    )  # fmt: skip


def _regex_agrees(match: re.Match[str], pattern: CompiledPattern, row: Row) -> bool:
    """Whether the ``bandwidthResult`` regex read the same size, busbw and algbw as the columns."""
    groups, mine = match.groupdict(), row.out_of_place
    busbw = float(groups["busBW"]) * pattern.scale("busBW")
    algbw = mine.alg_bw_g_bps
    if groups.get("algBW") is not None:
        algbw = float(groups["algBW"]) * pattern.scale("algBW")
    return (
        round(float(groups["size"]) * pattern.scale("size")) == row.size_bytes
        and math.isclose(busbw, mine.bus_bw_g_bps, rel_tol=1e-9, abs_tol=1e-9)
        and math.isclose(algbw, mine.alg_bw_g_bps, rel_tol=1e-9, abs_tol=1e-9)
    )


def _table_text(text: str) -> bool:
    return text.lstrip().startswith("#") or _ROW_LIKE_RE.match(text) is not None


def _strip(line: LogLine) -> Stripped:
    """The line without launcher prefixes, and without a ``host: `` one before table text."""
    stripped = strip_prefixes(line.text)
    if _table_text(stripped.text):
        return stripped
    hosted = strip_host_prefix(stripped)
    return hosted if _table_text(hosted.text) else stripped


def _sweep_gaps(rows: list[Row]) -> list[Failure]:
    """Rows missing from one size progression (every step a constant factor or increment)."""
    sizes = [(r.size_bytes, r) for r in rows if r.size_bytes > 0]
    pairs = [(a, b) for a, b in itertools.pairwise(sizes) if a[0] != b[0]]
    if len(pairs) < 2:
        return []
    ratios = Counter(round(b[0] / a[0], 6) for a, b in pairs)
    if len(ratios) == 1 or len(Counter(b[0] - a[0] for a, b in pairs)) == 1:
        return []
    ratio = ratios.most_common(1)[0][0]
    return [
        Failure.of(
            "missing-rows",
            f"rows missing or out of order between sizes {a} and {b} "
            f"(the table steps by x{ratio:g})",
            row.source,
            row.line,
        )
        for (a, _), (b, row) in pairs
        if round(b / a, 6) != ratio
    ]


def _problem(kind: str, message: str, line: LogLine) -> Failure:
    return Failure.of(kind, message, line.source, line.number)


class _Reader:
    def __init__(self, profile: LogProfile) -> None:
        self.result = Bandwidth(log_profile=profile.name)
        bandwidth = profile.patterns.get("bandwidthResult")
        if bandwidth is None:
            raise ValueError(f"LogProfile {profile.name!r} has no bandwidthResult pattern")
        self.row_pattern: CompiledPattern = bandwidth
        transport = profile.patterns.get("networkTransport")
        self.transport_re = (transport or _DEFAULT_TRANSPORT).pattern
        self.table: Table | None = None
        self.source: str | None = None
        self.listing: list[Rank] | None = None  # the Rank lines under the last "Using devices"
        self.repeated: list[Rank] = []

    def open_table(self, line: LogLine, has_header: bool, has_root: bool, old: bool) -> Table:
        self.table = Table(
            source=line.source, start_line=line.number, has_header=has_header,
            has_root=has_root, format="old" if old else "new",
        )  # fmt: skip
        self.result.tables.append(self.table)
        return self.table

    def row(self, line: LogLine, body: str) -> bool:
        """Read a row into the open table (or one it opens); ``True`` for any row-like line."""
        cut = _FAILURE_IN_ROW_RE.search(body)
        if cut is not None and _ROW_START_RE.match(body[: cut.start()]):
            return True  # a row cut short by a failure message; the failure scan reports it
        match = self.row_pattern.pattern.search(body)
        if match is None and not _ROW_LIKE_RE.match(body):
            return False
        table = self.table
        if table is None or table.complete:
            try:
                probe = _read_row(body, None, line)
            except ValueError:
                return False
            table = self.open_table(line, False, probe.root is not None, probe.root is None)
        try:
            row = _read_row(body, table, line)
        except ValueError as err:
            message = f"unparsable results row ({err}): {body.strip()[:120]!r}"
            table.problems.append(_problem("unparsable-row", message, line))
            return True
        if match is not None and _regex_agrees(match, self.row_pattern, row):
            row.matched_by = "profile"
        elif match is not None:
            table.regex_disagreements.append(line.number)
        table.rows.append(row)
        return True

    def footer(self, line: LogLine, body: str) -> bool:
        oob, avg = _OOB_RE.match(body), _AVG_RE.match(body)
        if oob is None and avg is None:
            return False
        table = self.table or (self.result.tables[-1] if self.result.tables else None)
        if table is None:
            self.result.problems.append(
                _problem("bad-footer", "footer without a results table", line)
            )
            return True
        table.complete = True
        try:
            if oob is not None:
                table.out_of_bounds = int(oob.group("count"))
                table.out_of_bounds_failed = oob.group("verdict") == "FAILED"
            elif avg is not None:
                table.avg_bus_bandwidth_g_bps = _number(avg.group("value"))
                table.avg_source = "footer"
                table.avg_check_failed = avg.group("verdict") == "FAILED"
        except ValueError:
            table.problems.append(_problem("bad-footer", f"unreadable footer {body!r}", line))
        return True

    def feed(self, line: LogLine) -> None:
        if line.source != self.source:
            self.source, self.table = line.source, None
        raw = line.text
        if "NCCL " in raw and self.nccl_line(line, raw):
            return
        body = _strip(line).text
        if body.startswith("+ ") or "_perf" in body:
            binary = _BINARY_RE.search(body)
            if binary is not None and self.result.collective is None:
                self.result.collective = binary.group("name")
        if body.strip() == "...":
            if self.listing and (self.table is None or self.table.complete):
                self.result.rank_elisions += 1
            elif self.table is not None and not self.table.complete:
                self.table.elisions += 1
            return
        if body.lstrip().startswith("#") or _BARE_COMMENT_RE.match(body):
            self.comment(line, body.strip().lstrip("#").strip())
            return
        table = self.table
        if self.row(line, body) or table is None or table.complete:
            return
        if _FRAGMENT_RE.match(body):
            message = f"fragment of a results row inside the table: {body.strip()[:80]!r}"
            table.problems.append(_problem("unparsable-row", message, line))
        elif _GARBLED_RE.search(body):
            message = f"garbled line inside the results table: {body.strip()[:80]!r}"
            table.problems.append(_problem("garbled-line", message, line))

    def nccl_line(self, line: LogLine, raw: str) -> bool:
        """Read an NCCL library line (version, network); ``True`` when it is one."""
        transport = self.transport_re.search(raw)
        if transport is not None:
            name = transport.group("transport").strip()
            if name not in self.result.network_transports:
                self.result.network_transports.append(name)
            return True
        version = _NCCL_VERSION_RE.search(raw)
        if version is not None and self.result.nccl_version is None:
            self.result.nccl_version = version.group("version")
        if "NCCL INFO" not in raw and "NCCL WARN" not in raw:
            return False
        if not _TYPE_WORD_RE.search(raw, 0, raw.find("NCCL ")):
            return True
        body = _strip(line).text
        if _ROW_START_RE.match(body):  # a results row interleaved with NCCL output
            table = self.table
            problems = self.result.problems if table is None or table.complete else table.problems
            message = (
                "results row interleaved with NCCL output (its values cannot be trusted): "
                f"{body.strip()[:100]!r}"
            )
            problems.append(_problem("garbled-line", message, line))
        return True

    def comment(self, line: LogLine, body: str) -> None:
        """A header, footer or ``Rank`` line (its ``#`` removed)."""
        if _HEADER_RE.match(body):
            names = body.split()
            old = "error" in names and "#wrong" not in names
            self.open_table(line, True, "root" in names, old)
            self.listing = None
        elif self.footer(line, body):
            return
        elif body.startswith("Using devices"):
            self.listing = []
        elif (found := _RANK_RE.match(body)) is not None:
            self.rank(Rank.model_validate({k: found[k] for k in Rank.model_fields}))
        elif (found := _TESTS_VERSION_RE.match(body)) is not None:
            self.result.nccl_tests_version = found.group("version")
        elif (found := _STARTING_RE.match(body)) is not None:
            binary = found.group("binary").removesuffix("_mpi").removesuffix("_perf")
            self.result.collective = binary
        elif _CONCLUDED_RE.match(body) and self.result.tables:
            self.result.tables[-1].complete = True
        elif body.startswith("nThread"):
            for key, value in _NTHREAD_FIELDS.findall(body):
                self.result.parameters[key.rstrip(":").replace(" ", "_")] = value

    def rank(self, rank: Rank) -> None:
        """Record a ``Rank`` line; one whose number its device listing already has is repeated."""
        self.listing = self.listing or []
        if any(r.rank == rank.rank for r in self.listing):
            self.repeated.append(rank)
        self.listing.append(rank)
        self.result.ranks.append(rank)

    def repeats(self, source: str | None) -> list[Failure]:
        """Rank numbers listed more than once under one ``Using devices``: separate runs."""
        if not self.repeated:
            return []
        rank = self.repeated[0].rank
        runs = 1 + sum(r.rank == rank for r in self.repeated)
        hosts = ", ".join(dict.fromkeys(r.host for r in self.result.ranks if r.rank == rank))
        message = (
            f"rank {rank} is listed {runs} times (on {hosts}): the log holds {runs} separate runs "
            "that each numbered their own ranks, not one run across the hosts (nccl-tests built "
            "without MPI=1, or launched without a working MPI); their bandwidth is not the group's"
        )
        return [Failure.of("repeated-ranks", message, source)]

    def close(self, table: Table) -> None:
        """The problems only the whole table shows; the average when the footer lacks it."""
        if not table.elisions:
            table.problems.extend(p for s in table.sweeps for p in _sweep_gaps(s))
        where = f"results table at line {table.start_line}"
        if not table.rows and not table.problems:
            message = f"{where} has no rows"
            table.problems.append(Failure.of("no-rows", message, table.source, table.start_line))
        if table.rows and not table.complete:
            last = table.rows[-1]
            message = (
                f"{where} has no footer ('# Out of bounds values' or '# Avg bus bandwidth') after "
                f"its last row (line {last.line}, size {last.size_bytes}): the log is truncated "
                "or the test did not finish"
            )
            table.problems.append(Failure.of("no-footer", message, last.source, last.line))
        if table.avg_bus_bandwidth_g_bps is None and table.rows:
            values = [m.bus_bw_g_bps for r in table.rows for m in (r.out_of_place, r.in_place)]
            table.avg_bus_bandwidth_g_bps = sum(values) / len(values)
            table.avg_source = "computed"


def parse_nccl(lines: Sequence[LogLine], profile: LogProfile) -> Bandwidth:
    """Parse nccl-tests output (no table spans two sources); ValueError without bandwidthResult."""
    reader = _Reader(profile)
    for line in lines:
        reader.feed(line)
    for table in reader.result.tables:
        reader.close(table)
    reader.result.problems.extend(reader.repeats(lines[0].source if lines else None))
    return reader.result


def coverage_gaps(spec: GroupSpec, result: Bandwidth) -> list[str]:
    """What the log's ``Rank`` lines leave uncovered of the group (nodes, GPUs, rank lines)."""
    nodes = len(spec.nodes) if spec.nodes else spec.num_nodes
    per_node = spec.num_proc_per_node if isinstance(spec.num_proc_per_node, int) else None
    gaps = []
    if nodes is None:
        gaps.append("the group's node count (no group-nodes annotation, no spec.trainer.numNodes)")
    if per_node is None:
        gaps.append(
            "the group's GPUs per node (spec.trainer.numProcPerNode is "
            f"{spec.num_proc_per_node!r}, not a number)"
        )
    if not result.ranks:
        shape = f" ({nodes} nodes x {per_node} GPUs)" if nodes and per_node else ""
        return [
            *gaps,
            "'# Rank N ... on HOST device D' lines under '# Using devices': the log does not "
            f"show which hosts and GPUs ran the test, so it cannot cover the group{shape}",
        ]
    devices: dict[str, set[int]] = {}
    for rank in result.ranks:
        devices.setdefault(rank.host, set()).add(rank.device)
    listed = {rank.rank for rank in result.ranks}
    if len(listed) <= max(listed):
        gaps.append(
            f"rank lines: the log lists {len(listed)} of ranks 0-{max(listed)} (the others are "
            "elided or missing), so the hosts and GPUs of the rest are unknown"
        )
    hosts = ", ".join(devices)
    if nodes is not None and len(devices) < nodes:
        unseen = [n for n in spec.nodes or () if not any(same_host(h, n) for h in devices)]
        named = f"; no ranks on {', '.join(unseen)}" if len(unseen) == nodes - len(devices) else ""
        gaps.append(
            f"{nodes - len(devices)} of the group's {nodes} nodes: the ranks ran on "
            f"{len(devices)} host(s) ({hosts}){named}"
        )
    if nodes is not None and len(devices) > nodes:
        gaps.append(
            f"a log of this group: its ranks ran on {len(devices)} hosts ({hosts}) but the "
            f"group has {nodes} nodes"
        )
    gaps.extend(
        f"{per_node - len(used)} of {per_node} GPUs on host {host}: its ranks used device(s) "
        + ", ".join(str(d) for d in sorted(used))
        for host, used in devices.items()
        if per_node is not None and len(used) < per_node
    )
    return gaps


def _table_failures(table: Table, hosts: str) -> list[Failure]:
    """What a table itself reports as failed: its problems, wrong results, the -G check."""
    failures = list(table.problems)
    hardware: Reason = "HardwareFailureDetected"
    if table.out_of_bounds_failed or (table.out_of_bounds or 0) > 0:
        said = f"nccl-tests found {table.out_of_bounds} out-of-bounds values (wrong results){hosts}"
        failures.append(Failure.of("nccl-out-of-bounds", said, table.source, None, hardware))
    if wrong := table.wrong_rows:
        first = wrong[0]
        count = max(first.out_of_place.wrong or 0, first.in_place.wrong or 0)
        said = (
            f"{len(wrong)} of {len(table.rows)} rows report #wrong > 0 (first: size "
            f"{first.size_bytes} B, {count} wrong){hosts}"
        )
        failures.append(Failure.of("nccl-wrong-results", said, first.source, first.line, hardware))
    if table.avg_check_failed:
        said = "nccl-tests reports 'Avg bus bandwidth' FAILED (below its -G check value)"
        failures.append(
            Failure.of("nccl-avg-check", said, table.source, None, "ThresholdViolation")
        )
    return failures


def _table_notes(table: Table, profile: str | None) -> list[str]:
    """How a table was read, and whether its sweep has the shape of a bandwidth curve."""
    where = f"table at {table.source}:{table.start_line}"
    notes: list[str] = []
    if table.validation is False:
        notes.append(
            f"{where}: validation was off (#wrong is N/A, nccl-tests -c 0), so results were not "
            "checked for correctness"
        )
    if table.elisions:
        notes.append(f"{where}: {table.elisions} '...' line(s): rows were elided from this log")
    if table.regex_disagreements:
        notes.append(
            f"{where}: the {profile} bandwidthResult regex misreads "
            f"{len(table.regex_disagreements)} row(s) (old format); their columns were used"
        )
    if table.avg_source == "computed" and table.complete:
        notes.append(
            f"{where}: no '# Avg bus bandwidth' line; the average was computed from the rows"
        )
    if sizes := ", ".join(human_bytes(s) for s in table.erratic_sizes):
        notes.append(
            f"{where}: erratic sweep: the bus bandwidth at {sizes} "
            "breaks the curve (below half of a smaller size's, or an isolated spike); "
            f"busBandwidthGBps reads the sustained {table.sustained_bus_bandwidth_g_bps} GB/s, "
            f"not the raw peak {table.peak_bus_bandwidth_g_bps} GB/s"
        )
    return notes


def _collective(group: GroupReport, spec: GroupSpec, result: Bandwidth) -> None:
    """Fail a log of another collective than the testType; note when the log names none."""
    test_type = spec.bandwidth.test_type if spec.bandwidth else None
    result.test_type = test_type
    if test_type and result.collective:
        if test_type.replace("_", "").lower() != result.collective.replace("_", "").lower():
            message = (
                f"bandwidthMeasurement.testType is {test_type}, but the log is from "
                f"{result.collective}_perf"
            )
            group.failures.append(Failure.of("collective-mismatch", message))
    elif test_type:
        group.notes.append(
            f"the log does not name its collective; testType {test_type} not checked"
        )


def judge(group: GroupReport, result: Bandwidth, spec: GroupSpec) -> None:
    """Record what a parsed nccl-tests log says against the group, and whether it measured."""
    group.bandwidth = result
    measured = bool(result.measured)
    if measured and not spec.from_log and (gaps := coverage_gaps(spec, result)):
        message = f"the log does not cover group {spec.group}; missing: " + "; ".join(gaps)
        group.failures.append(Failure.of("log-coverage", message))
    group.failures.extend(result.problems)
    hosts = f" on ranks of {', '.join(result.hosts)}" if result.hosts else ""
    for table in result.tables:
        group.failures.extend(_table_failures(table, hosts))
        group.notes.extend(_table_notes(table, result.log_profile))
    _collective(group, spec, result)
    low, sizes = (
        result.parameters.get("minBytes", ""),
        [r.size_bytes for t in result.measured for r in t.rows],
    )
    if low.isdigit() and sizes and min(sizes) > int(low):
        group.notes.append(
            f"the results start at {human_bytes(min(sizes))}, above minBytes "
            f"{human_bytes(int(low))}: the smaller sizes are not in the log"
        )
    if result.rank_elisions or result.ranks_listed < result.rank_count:
        group.notes.append(
            f"the log lists {result.ranks_listed} of its {result.rank_count} ranks (Rank lines "
            "elided): the hosts and GPUs of the others are unknown"
        )
    if "Socket" in result.network_transports and len(result.hosts or spec.nodes or ()) > 1:
        group.notes.append("NCCL used the Socket transport (no RDMA network) on a multi-node group")
    if spec.bandwidth and not measured:
        group.notes.append("bandwidthMeasurement is configured but the log has no results table")
    group.has_data = group.has_data or measured


def _detect(lines: Sequence[LogLine]) -> bool:
    """A column header, a footer, a header line or a typed results row (prefixes removed)."""
    for line in lines:
        text = line.text
        if any(mark in text for mark in _MARKS):
            return True
        if "size" in text and "count" in text and _HEADER_RE.match(strip_prefixes(text).text):
            return True
        if _TYPE_WORD_RE.search(text) and _TYPED_ROW_RE.match(strip_prefixes(text).text):
            return True
    return False


def _metric(attr: str) -> Metric:
    def read(group: GroupReport) -> tuple[float | None, str | None]:
        result = group.bandwidth
        if result is None or not result.measured:
            return None, "no nccl-tests results table in the log"
        value = getattr(result, attr)
        return (value, None) if value is not None else (None, "not in the table")

    return read


FORMAT = LogFormat(
    name="nccl-tests",
    kind="bandwidth",
    profile="nccl-bandwidth",
    detect=_detect,
    measure=lambda group, lines, profile, spec: judge(group, parse_nccl(lines, profile), spec),
    metrics={
        "busBandwidthGBps": _metric("sustained_bus_bandwidth_g_bps"),
        "algBandwidthGBps": _metric("sustained_alg_bandwidth_g_bps"),
        "avgBusBandwidthGBps": _metric("avg_bus_bandwidth_g_bps"),
    },
)
