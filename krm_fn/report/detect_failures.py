"""Find the lines of a log that say a run failed, whatever the workload.

The failures recognised, and their reasons, are the table in docs/report.md: ``NCCL WARN``
families (:data:`_WARN_RULES`, a wrapped continuation joined), nccl-tests ``Test NCCL/CUDA
failure`` with its stack lines folded in, tracebacks, ``nccl*Error`` results, mpirun and the
PyTorch watchdog, then phrases (:data:`_PHRASE_RULES`, with every format's
:attr:`~krm_fn.report.formats.LogFormat.failure_rules`). :data:`BENIGN_WARNINGS` are not.

Invariants:
    * Detection never decides pass or fail; it reports what it found and where.
    * A finding names the host (and peer) whenever the line does, and never invents one.
    * Findings alike but for hex addresses, process ids and ``host:pid:tid [dev]`` prefixes
      are merged: listed once, with a count and every host that printed them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from krm_fn.report.formats import FORMATS, PhraseRule
from krm_fn.report.loglines import LogLine
from krm_fn.report.model import Failure, Reason
from krm_fn.report.prefixes import strip_prefixes

BENIGN_WARNINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "NCCL graph search fell back to the simple order (a slower but working ring)",
        re.compile(r"Could not find a path for pattern \d+, falling back to simple order"),
    ),
)
"""``NCCL WARN`` messages that healthy runs print: (why benign, pattern)."""


_NCCL_PREFIX_RE = re.compile(r"(?P<host>[A-Za-z0-9][A-Za-z0-9_.-]*):\d+:\d+ \[\d+\]")
"""NCCL's ``host:pid:tid [dev]`` line prefix."""
_WARN_RE = re.compile(r"\bNCCL WARN\s*(?P<msg>.*)$")
_IB_WC_STATUS = {
    5: "work request flushed (IBV_WC_WR_FLUSH_ERR)",
    10: "remote access error (IBV_WC_REM_ACCESS_ERR)",
    12: "transport retry counter exceeded (IBV_WC_RETRY_EXC_ERR)",
    13: "RNR retry counter exceeded (IBV_WC_RNR_RETRY_EXC_ERR)",
}
_NEW_RECORD_RE = re.compile(
    r"^\s*$|^\s*[\[#+.]|^\s*\d+\s+\d+\s|^\d{4}-\d{2}-\d{2}|^\s*[A-Za-z0-9][\w.-]*:\s|^"
    + _NCCL_PREFIX_RE.pattern
)
_TEST_FAILURE_RE = re.compile(
    r"(?:^|\s)(?:(?P<host>[A-Za-z0-9][\w.-]*):\s+)?(?:Test (?P<what>NCCL|CUDA) failure"
    r"(?: (?P<where>[^\s']+:\d+))?|(?P<old>NCCL|CUDA|Cuda) failure (?P<oldwhere>[\w.-]+\.cu:\d+))"
    r"(?: '(?P<msg>.*)'| (?P<bare>\S.*))?\s*$"
)
"""nccl-tests' failure macros: ``[host: ]Test NCCL|CUDA failure file:line 'message'`` (the
message quoted or not), and before 2.0 ``NCCL|Cuda failure file.cu:line 'message'``."""
_TEST_STACK_RE = re.compile(
    r"(?:^|\s)(?:\.{2,3} )?(?:(?P<host>\S+) )?pid \d+: Test failure (?P<where>\S+)"
)
_NCCL_RESULT_RE = re.compile(
    r"\b(?P<name>ncclRemoteError|ncclSystemError|ncclInternalError|ncclUnhandledCudaError|"
    r"ncclInvalidUsage|ncclInvalidArgument)\b\s*:?\s*(?P<msg>.*)"
)
_TRACEBACK_RE = re.compile(r"Traceback \(most recent call last\):")
_EXCEPTION_RE = re.compile(
    r"^(?P<name>[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit))(?::\s*(?P<msg>.*))?$"
)
_ECC_RE = re.compile(r"uncorrectable ECC error", re.IGNORECASE)
_HINTS = ("NCCL WARN", "failure", "Traceback", "nccl", "mpirun", "Watchdog")
"""Literals one of which every line a core pattern (not a phrase rule) finds contains."""
_MPIRUN_SIGNAL_RE = re.compile(
    r"mpirun noticed that process rank (?P<rank>\d+) with PID \d+ on node (?P<host>\S+) "
    r"exited on signal (?P<signal>\d+)"
)
_WATCHDOG_RE = re.compile(
    r"Watchdog caught collective operation timeout: WorkNCCL\(.*?OpType=(?P<op>\w+).*?"
    r"Timeout\(ms\)=(?P<timeout>\d+)\)"
)
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+")
_PID_RE = re.compile(_NCCL_PREFIX_RE.pattern + r"|\bpid \d+|\bPID \d+|\brank \d+\b")
_TRACEBACK_LOOKAHEAD = 200
"""How many lines after ``Traceback`` are searched for the exception line."""
_TS_PREFIX_RE = re.compile(r"^\[\d{4}-\d{2}-\d{2} [\d:.,]+\]\s*")


def _clean(line: LogLine) -> str:
    return _TS_PREFIX_RE.sub("", strip_prefixes(line.text).text)


def _continues(follow: str) -> bool:
    """Whether a line continues the ``NCCL WARN`` before it: it is no record of its own."""
    return not (
        _NEW_RECORD_RE.match(follow)
        or any(hint in follow for hint in ("NCCL", *_HINTS))
        or any(rule.pattern.search(follow) for rule in _PHRASE_RULES)
    )


def _host_before(text: str, end: int) -> str | None:
    matches = list(_NCCL_PREFIX_RE.finditer(text, 0, end))
    return matches[-1].group("host") if matches else None


_WARN_RULES: tuple[tuple[re.Pattern[str], Reason, str, str], ...] = (
    (re.compile(r"NET/IB\s*:\s*Got completion from peer (?P<peer>[\w.:-]+)<(?P<port>\d+)> "
                r"with error (?P<code>\d+)"),
     "HardwareFailureDetected", "nccl-warn-ib-completion",
     "NET/IB completion error {code}, {meaning}, from peer {peer}: {message}"),
    (re.compile(r"NET/OFI Request \S+ completed with error\.?(?P<rest>.*)"),
     "HardwareFailureDetected", "nccl-warn-ofi-request-error",
     "NET/OFI request completed with error:{rest}"),
    (re.compile(r"Connect to (?P<peer>[\w.:-]+)<(?P<port>\d+)> failed\s*:\s*(?P<why>.+)"),
     "WorkloadFailed", "nccl-warn-connect-failed", "connect to {peer} failed: {why}"),
    (re.compile(r"NET/OFI .*(initiali[sz]ation failed|Failed to initiali[sz]e|"
                r"Initiali[sz]ing plugin failed)", re.IGNORECASE),
     "WorkloadFailed", "nccl-warn-net-plugin-init",
     "network plugin failed to initialise (NCCL may fall back to sockets): {message}"),
    (re.compile(f"(?i:{_ECC_RE.pattern})|NET/IB"),
     "HardwareFailureDetected", "nccl-warn-hardware", "NCCL WARN {message}"),
    (re.compile(""), "WorkloadFailed", "nccl-warn", "NCCL WARN {message}"),
)  # fmt: skip
"""``NCCL WARN`` families ``(pattern, reason, kind, message)``, first match wins; the message
is formatted with the pattern's groups, the warning (``message``), the ``peer`` as
``host:port`` and the ``meaning`` of an InfiniBand completion ``code``."""


def _warn_finding(line: LogLine, text: str, message: str) -> Failure:
    """One ``NCCL WARN`` message (with its wrapped continuation) as a finding."""
    found, reason, kind, template = next(
        (m, r, k, t) for p, r, k, t in _WARN_RULES if (m := p.search(message)) is not None
    )
    groups: dict[str, object] = {**found.groupdict(), "message": message}
    peer = f"{groups['peer']}:{groups['port']}" if "peer" in groups else None
    if "code" in groups:
        code = int(found.group("code"))
        groups |= {"code": code, "meaning": _IB_WC_STATUS.get(code, f"error {code}")}
    said = template.format_map({**groups, "peer": peer})
    return _at(line, kind, said, _host_before(text, len(text) - len(message)), reason, peer)


def _merge(findings: Iterable[Failure]) -> list[Failure]:
    merged: dict[tuple[str, str, str], Failure] = {}
    for finding in findings:
        masked = _PID_RE.sub("…", _HEX_RE.sub("0x…", finding.message))
        key = (finding.reason, finding.kind, masked)
        own = [finding.host] if finding.host else []
        first = merged.setdefault(key, finding)
        if first is finding:
            first.hosts = own
        else:
            first.count += finding.count
            first.hosts = list(dict.fromkeys([*first.hosts, *own]))
    return list(merged.values())


_PHRASE_RULES: tuple[PhraseRule, ...] = (
    PhraseRule(_ECC_RE, "HardwareFailureDetected", "ecc-error", "uncorrectable ECC error",
               ("CC", "cc")),
    PhraseRule(re.compile(r"CUDA out of memory|OutOfMemoryError"), "WorkloadFailed",
               "cuda-out-of-memory", "CUDA out of memory", ("emory",)),
    PhraseRule(re.compile(r"mpirun detected that one or more processes exited with non-zero "
                          r"status|Primary job\s+terminated normally, but \d+ process(?:es)? "
                          r"returned"), "WorkloadFailed", "mpirun-nonzero-exit",
               "Open MPI: a process exited with non-zero status, the job was aborted",
               ("mpirun", "Primary job")),
    PhraseRule(re.compile(r"Connection refused", re.IGNORECASE), "WorkloadFailed",
               "connection-refused", "connection refused", ("efused", "EFUSED")),
    PhraseRule(re.compile(r"Segmentation fault|core dumped"), "WorkloadFailed",
               "segmentation-fault", "segmentation fault", ("egmentation", "dumped")),
    *(rule for log_format in FORMATS for rule in log_format.failure_rules),
)  # fmt: skip
"""Phrases checked last, outside ``NCCL INFO`` lines, first match wins: these, then every
format's own :attr:`~krm_fn.report.formats.LogFormat.failure_rules`."""


def _at(
    line: LogLine,
    kind: str,
    message: str,
    host: str | None = None,
    reason: Reason = "WorkloadFailed",
    peer: str | None = None,
) -> Failure:
    return Failure(
        reason=reason, kind=kind, message=message, host=host, peer=peer,
        source=line.source, line=line.number,
    )  # fmt: skip


def _test_failure(line: LogLine, test: re.Match[str], frames: list[str]) -> Failure:
    """A ``Test NCCL/CUDA failure``, listing the stack lines folded into it."""
    what = (test.group("what") or test.group("old")).upper()
    place = test.group("where") or test.group("oldwhere")
    where = f" at {place}" if place else ""
    detail = (test.group("msg") or test.group("bare") or "").strip(" /")
    trail = f" (stack: {', '.join(frames)})" if frames else ""
    said = f"Test {what} failure{where}: {detail}{trail}"
    return _at(line, f"nccl-tests-{what.lower()}-failure", said, test.group("host"))


def _traceback(line: LogLine, after: list[LogLine]) -> Failure:
    """A Python traceback, named by the first exception line among the lines after it."""
    exception = "Python traceback"
    for later in after:
        if (found := _EXCEPTION_RE.match(_clean(later).strip())) is not None:
            exception = f"{found.group('name')}: {found.group('msg') or ''}".strip(": ")
            break
    return _at(line, "python-traceback", f"Python traceback: {exception}")


def _other(line: LogLine, text: str) -> Failure | None:
    """An ``nccl*Error`` result, an mpirun signal or PyTorch's NCCL watchdog timeout."""
    if (found := _NCCL_RESULT_RE.search(text)) is not None:
        name = found.group("name")
        said = f"{name}: {found.group('msg').strip()}".strip(": ")
        host = _host_before(text, found.start())
        return _at(line, f"nccl-result-{name}", said, host)
    if (found := _MPIRUN_SIGNAL_RE.search(text)) is not None:
        said = f"rank {found.group('rank')} exited on signal {found.group('signal')}"
        return _at(line, "mpirun-rank-signal", said, found.group("host"))
    if (found := _WATCHDOG_RE.search(text)) is not None:
        said = (
            f"PyTorch NCCL watchdog: collective {found.group('op')} did not complete within its "
            f"timeout of {found.group('timeout')} ms (a hang, or a rank that stopped)"
        )
        return _at(line, "nccl-watchdog-timeout", said)
    return None


class _Scan:
    """One pass over the lines; a finding may consume the lines that continue it."""

    def __init__(self, lines: Iterable[LogLine]) -> None:
        self.items = list(lines)
        self.index = 0
        self.in_test_failure = False  # in a nccl-tests failure or its stack: a stack line joins
        self.findings: list[Failure] = []

    def run(self) -> list[Failure]:
        while self.index < len(self.items):
            line = self.items[self.index]
            self.index += 1
            self.read(line, _clean(line))
        return self.findings

    def read(self, line: LogLine, text: str) -> None:
        """Classify one line (without prefixes): the one call the scan makes per line."""
        if not any(hint in text for hint in _HINTS):
            self.in_test_failure = False
            self.phrase(line, text)
        elif (warn := _WARN_RE.search(text)) is not None:
            self.read_warn(line, text, warn.group("msg").strip())
        elif (test := _TEST_FAILURE_RE.search(text)) is not None:
            self.in_test_failure = True
            self.findings.append(_test_failure(line, test, self.fold_stack()))
        elif (stack := _TEST_STACK_RE.search(text)) is not None:
            if not self.in_test_failure:  # a stack line without its message line
                said = f"nccl-tests failure at {stack.group('where')}"
                self.findings.append(_at(line, "nccl-tests-failure", said, stack.group("host")))
        elif _TRACEBACK_RE.search(text):
            self.in_test_failure = False
            after = self.items[self.index : self.index + _TRACEBACK_LOOKAHEAD]
            self.findings.append(_traceback(line, after))
        else:
            self.in_test_failure = False
            found = _other(line, text)
            if found is None:
                self.phrase(line, text)
            else:
                self.findings.append(found)

    def phrase(self, line: LogLine, text: str) -> None:
        """Find the first phrase rule the line matches."""
        if "NCCL INFO" in text:  # never a failure (the benign "Connection refused, retrying")
            return
        for rule in _PHRASE_RULES:
            if any(hint in text for hint in rule.hint) and rule.pattern.search(text):
                said = f"{rule.label}: {_NCCL_PREFIX_RE.sub('', text).strip()}"  # no host:pid:tid
                host = _host_before(text, len(text))
                self.findings.append(_at(line, rule.kind, said, host, rule.reason))
                return

    def read_warn(self, line: LogLine, text: str, message: str) -> None:
        """Record an ``NCCL WARN`` unless benign, joining its wrapped continuation line."""
        if any(pattern.search(message) for _, pattern in BENIGN_WARNINGS):
            return
        if self.index < len(self.items):
            follow = _clean(self.items[self.index])
            if _continues(follow):
                message = f"{message} {follow.strip()}"
                self.index += 1
        self.findings.append(_warn_finding(line, text, message))

    def fold_stack(self) -> list[str]:
        """Consume the stack lines that follow a test failure; return their places."""
        frames: list[str] = []
        while self.index < len(self.items):
            frame = _TEST_STACK_RE.search(_clean(self.items[self.index]))
            if frame is None:
                break
            frames.append(frame.group("where"))
            self.index += 1
        return frames


def detect_failures(lines: Iterable[LogLine]) -> list[Failure]:
    """The failures the lines (of one or more logs, in order) report, merged, in order."""
    return _merge(_Scan(lines).run())
