"""Find the lines of a log that say a run failed, whatever the workload.

Recognised (each becomes a :class:`Finding`):

* every ``NCCL WARN`` line, with its wrapped continuation; ``NET/IB`` completion errors and
  ``NET/OFI`` request errors are hardware findings, others are workload findings;
* ``Connection refused``, ``ncclRemoteError`` and the other ``nccl*Error`` result names;
* nccl-tests ``Test NCCL failure`` / ``Test CUDA failure``, at the start of a line or after
  the start of a results row on the same line (``2097152 32768 float none -1 node0: Test CUDA
  failure common.cu:389 '...'``); the `` .. host pid N: Test failure file:line`` stack lines
  that follow are folded into it (their places are listed in the message);
* Python tracebacks (the exception line is the message), ``CUDA out of memory``,
  uncorrectable ECC errors, ``mpirun noticed that process rank … exited on signal``,
  segmentation faults.

Not failures (:data:`BENIGN_WARNINGS`): ``NCCL WARN`` lines NCCL prints on healthy runs, such as
``Could not find a path for pattern 4, falling back to simple order`` (graph search on a
topology without the fast pattern; NCCL carries on with a working ring).

Invariants:
    * Detection never decides pass or fail; it only reports what it found and where.
    * A finding names the host (and peer address) whenever the line does, and never invents
      one: ``host`` is ``None`` when the log does not say.
    * Findings with the same reason, kind and message (after hex addresses, process ids and
      the ``host:pid:tid [dev]`` prefix are masked) are merged and counted, whatever host
      printed them, so a failure printed by every rank is listed once, with every host
      (``hosts``) and the count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from krm_fn.report.loglines import LogLine
from krm_fn.report.prefixes import strip_prefixes

__all__ = ["BENIGN_WARNINGS", "Finding", "Reason", "detect_failures"]

Reason = Literal["WorkloadFailed", "ThresholdViolation", "HardwareFailureDetected"]


@dataclass(frozen=True)
class Finding:
    """One failure a log reports.

    Attributes:
        reason: ``HardwareFailureDetected`` or ``WorkloadFailed``.
        kind: a short stable label, e.g. ``nccl-warn-ib-completion``.
        message: what happened, in one line.
        host: the host the line names, or ``None``.
        peer: the remote address the line names (``10.2.0.5:33092``), or ``None``.
        source: the log file.
        line: the 1-based line number of the first occurrence.
        count: how many lines said the same.
        hosts: every host that printed it, in order of first occurrence.

    """

    reason: Reason
    kind: str
    message: str
    host: str | None
    peer: str | None
    source: str
    line: int
    count: int = 1
    hosts: tuple[str, ...] = ()


BENIGN_WARNINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "NCCL graph search fell back to the simple order (a slower but working ring)",
        re.compile(r"Could not find a path for pattern \d+, falling back to simple order"),
    ),
)
"""``NCCL WARN`` messages that healthy runs print: (why benign, pattern)."""


_NCCL_PREFIX_RE = re.compile(
    r"(?P<host>[A-Za-z0-9][A-Za-z0-9_.-]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\]"
)
_WARN_RE = re.compile(r"\bNCCL WARN\s*(?P<msg>.*)$")
_IB_COMPLETION_RE = re.compile(
    r"NET/IB\s*:\s*Got completion from peer (?P<peer>[\w.:-]+)<(?P<port>\d+)> "
    r"with error (?P<code>\d+)"
)
_OFI_ERROR_RE = re.compile(r"NET/OFI Request \S+ completed with error\.?(?P<rest>.*)")
_CONNECT_RE = re.compile(r"Connect to (?P<peer>[\w.:-]+)<(?P<port>\d+)> failed\s*:\s*(?P<why>.+)")
_PLUGIN_INIT_RE = re.compile(
    r"NET/OFI .*(initiali[sz]ation failed|Failed to initiali[sz]e|Initiali[sz]ing plugin failed)",
    re.IGNORECASE,
)
_IB_WC_STATUS = {
    5: "work request flushed (IBV_WC_WR_FLUSH_ERR)",
    10: "remote access error (IBV_WC_REM_ACCESS_ERR)",
    12: "transport retry counter exceeded (IBV_WC_RETRY_EXC_ERR)",
    13: "RNR retry counter exceeded (IBV_WC_RNR_RETRY_EXC_ERR)",
}
_NEW_RECORD_RE = re.compile(
    r"^\s*$|^\s*[\[#+.]|^\s*\d+\s+\d+\s|^\d{4}-\d{2}-\d{2}|"
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*:\d+:\d+ \[\d+\]"
)
_TEST_FAILURE_RE = re.compile(
    r"(?:^|\s)(?:(?P<host>[A-Za-z0-9][\w.-]*):\s+)?Test (?P<what>NCCL|CUDA) failure "
    r"(?:(?P<where>[^\s']+) )?'(?P<msg>.*)'"
)
_TEST_STACK_RE = re.compile(r"^\s*\.\. (?P<host>\S+) [^:]*: Test failure (?P<where>\S+)")
_NCCL_RESULT_RE = re.compile(
    r"\b(?P<name>ncclRemoteError|ncclSystemError|ncclInternalError|ncclUnhandledCudaError|"
    r"ncclInvalidUsage|ncclInvalidArgument)\b\s*:?\s*(?P<msg>.*)"
)
_REFUSED_RE = re.compile(r"Connection refused", re.IGNORECASE)
_TRACEBACK_RE = re.compile(r"Traceback \(most recent call last\):")
_EXCEPTION_RE = re.compile(
    r"^(?P<name>[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit))(?::\s*(?P<msg>.*))?$"
)
_OOM_RE = re.compile(r"CUDA out of memory|OutOfMemoryError")
_ECC_RE = re.compile(r"uncorrectable ECC error", re.IGNORECASE)
_WARN_HARDWARE_RE = re.compile(r"(?i:uncorrectable ECC error)|NET/IB")
_MPIRUN_SIGNAL_RE = re.compile(
    r"mpirun noticed that process rank (?P<rank>\d+) with PID \d+ on node (?P<host>\S+) "
    r"exited on signal (?P<signal>\d+)"
)
_SEGV_RE = re.compile(r"Segmentation fault|core dumped")
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+")
_PID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*:\d+:\d+ \[\d+\]|\bpid \d+|\bPID \d+|\brank \d+\b")
_TRACEBACK_LOOKAHEAD = 200
"""How many lines after ``Traceback`` are searched for the exception line."""
_TS_PREFIX_RE = re.compile(r"^\[\d{4}-\d{2}-\d{2} [\d:.,]+\]\s*")


def _clean(line: LogLine) -> str:
    text = strip_prefixes(line.text).text
    return _TS_PREFIX_RE.sub("", text)


def _host_before(text: str, end: int) -> str | None:
    matches = list(_NCCL_PREFIX_RE.finditer(text, 0, end))
    return matches[-1].group("host") if matches else None


def _describe_ib_completion(found: re.Match[str], message: str) -> tuple[str, str | None]:
    """Name the InfiniBand work-completion status and the peer of a ``NET/IB`` error."""
    code = int(found.group("code"))
    meaning = _IB_WC_STATUS.get(code, f"error {code}")
    peer = f"{found.group('peer')}:{found.group('port')}"
    return f"NET/IB completion error {code}, {meaning}, from peer {peer}: {message}", peer


def _describe_ofi_error(found: re.Match[str], message: str) -> tuple[str, str | None]:
    """Keep what the OFI plugin says after its request error."""
    return f"NET/OFI request completed with error:{found.group('rest')}", None


def _describe_connect(found: re.Match[str], message: str) -> tuple[str, str | None]:
    """Name the peer a connection failed to, and why."""
    peer = f"{found.group('peer')}:{found.group('port')}"
    return f"connect to {peer} failed: {found.group('why').strip()}", peer


def _describe_plugin_init(found: re.Match[str], message: str) -> tuple[str, str | None]:
    """Say that the network plugin failed, which may leave NCCL on sockets."""
    return f"network plugin failed to initialise (NCCL may fall back to sockets): {message}", None


def _describe_warn(found: re.Match[str] | None, message: str) -> tuple[str, str | None]:
    """Quote the warning as NCCL printed it."""
    return f"NCCL WARN {message}", None


@dataclass(frozen=True)
class _WarnRule:
    """How one family of ``NCCL WARN`` messages becomes a finding.

    Attributes:
        pattern: what the message (after ``NCCL WARN``) contains.
        reason: the finding's reason.
        kind: the finding's kind.
        describe: ``(match, message) -> (finding message, peer or None)``.

    """

    pattern: re.Pattern[str]
    reason: Reason
    kind: str
    describe: Callable[[re.Match[str], str], tuple[str, str | None]]


_WARN_RULES: tuple[_WarnRule, ...] = (
    _WarnRule(
        _IB_COMPLETION_RE,
        "HardwareFailureDetected",
        "nccl-warn-ib-completion",
        _describe_ib_completion,
    ),
    _WarnRule(
        _OFI_ERROR_RE, "HardwareFailureDetected", "nccl-warn-ofi-request-error", _describe_ofi_error
    ),
    _WarnRule(_CONNECT_RE, "WorkloadFailed", "nccl-warn-connect-failed", _describe_connect),
    _WarnRule(
        _PLUGIN_INIT_RE, "WorkloadFailed", "nccl-warn-net-plugin-init", _describe_plugin_init
    ),
    _WarnRule(_WARN_HARDWARE_RE, "HardwareFailureDetected", "nccl-warn-hardware", _describe_warn),
)
"""``NCCL WARN`` families, first match wins; any other warning is a ``nccl-warn`` finding."""


def _warn_finding(line: LogLine, text: str, message: str) -> Finding:
    """Turn one ``NCCL WARN`` message into a finding by the first :data:`_WARN_RULES` match.

    Args:
        line: the line the warning starts on.
        text: the line without its log prefixes (names the host before the message).
        message: the warning, with its wrapped continuation.

    Returns:
        The finding, ``WorkloadFailed``/``nccl-warn`` when no rule matches.

    """
    host = _host_before(text, len(text) - len(message))
    for rule in _WARN_RULES:
        found = rule.pattern.search(message)
        if found is not None:
            said, peer = rule.describe(found, message)
            return Finding(rule.reason, rule.kind, said, host, peer, line.source, line.number)
    said, peer = _describe_warn(None, message)
    return Finding("WorkloadFailed", "nccl-warn", said, host, peer, line.source, line.number)


def _mask(message: str) -> str:
    return _PID_RE.sub("…", _HEX_RE.sub("0x…", message))


def _merge(findings: Iterable[Finding]) -> list[Finding]:
    merged: dict[tuple[str, str, str], Finding] = {}
    for finding in findings:
        key = (finding.reason, finding.kind, _mask(finding.message))
        own = (finding.host,) if finding.host else ()
        if key in merged:
            first = merged[key]
            hosts = tuple(dict.fromkeys((*first.hosts, *own)))
            merged[key] = replace(first, count=first.count + finding.count, hosts=hosts)
        else:
            merged[key] = replace(finding, hosts=own)
    return list(merged.values())


def _benign(message: str) -> bool:
    return any(pattern.search(message) for _, pattern in BENIGN_WARNINGS)


@dataclass(frozen=True)
class _PhraseRule:
    """A failure one line reports by a phrase anywhere in it.

    Attributes:
        pattern: the phrase.
        reason: the finding's reason.
        kind: the finding's kind.
        label: the start of the finding's message (the line follows it).

    """

    pattern: re.Pattern[str]
    reason: Reason
    kind: str
    label: str


_PHRASE_RULES: tuple[_PhraseRule, ...] = (
    _PhraseRule(_ECC_RE, "HardwareFailureDetected", "ecc-error", "uncorrectable ECC error"),
    _PhraseRule(_OOM_RE, "WorkloadFailed", "cuda-out-of-memory", "CUDA out of memory"),
    _PhraseRule(_REFUSED_RE, "WorkloadFailed", "connection-refused", "connection refused"),
    _PhraseRule(_SEGV_RE, "WorkloadFailed", "segmentation-fault", "segmentation fault"),
)
"""Phrases checked last, outside ``NCCL INFO`` lines; first match wins."""


def _at(line: LogLine, reason: Reason, kind: str, message: str, host: str | None) -> Finding:
    """A finding first seen on ``line`` (no peer address)."""
    return Finding(reason, kind, message, host, None, line.source, line.number)


def _phrase_finding(line: LogLine, text: str, rule: _PhraseRule) -> Finding:
    """A phrase finding quoting the line without its ``host:pid:tid [dev]`` prefixes."""
    return _at(
        line,
        rule.reason,
        rule.kind,
        f"{rule.label}: {_NCCL_PREFIX_RE.sub('', text).strip()}",
        _host_before(text, len(text)),
    )


def _test_failure_finding(line: LogLine, test: re.Match[str], frames: list[str]) -> Finding:
    """A ``Test NCCL/CUDA failure`` finding, listing the stack lines folded into it."""
    where = f" at {test.group('where')}" if test.group("where") else ""
    trail = f" (stack: {', '.join(frames)})" if frames else ""
    return _at(
        line,
        "WorkloadFailed",
        f"nccl-tests-{test.group('what').lower()}-failure",
        f"Test {test.group('what')} failure{where}: {test.group('msg').strip(' /')}{trail}",
        test.group("host"),
    )


def _stack_finding(line: LogLine, stack: re.Match[str]) -> Finding:
    """A nccl-tests failure known only by a stack line (its message line is missing)."""
    return _at(
        line,
        "WorkloadFailed",
        "nccl-tests-failure",
        f"nccl-tests failure at {stack.group('where')}",
        stack.group("host"),
    )


def _traceback_finding(line: LogLine, after: list[LogLine]) -> Finding:
    """A Python traceback, named by the first exception line among the lines after it."""
    exception = "Python traceback"
    for later in after:
        found = _EXCEPTION_RE.match(_clean(later).strip())
        if found is not None:
            exception = f"{found.group('name')}: {found.group('msg') or ''}".strip(": ")
            break
    return _at(
        line,
        "WorkloadFailed",
        "python-traceback",
        f"Python traceback: {exception}",
        None,
    )


def _result_finding(line: LogLine, text: str, result: re.Match[str]) -> Finding:
    """An ``nccl*Error`` result name, with what follows it and the host before it."""
    return _at(
        line,
        "WorkloadFailed",
        f"nccl-result-{result.group('name')}",
        f"{result.group('name')}: {result.group('msg').strip()}".strip(": "),
        _host_before(text, result.start()),
    )


def _signal_finding(line: LogLine, signal: re.Match[str]) -> Finding:
    """A rank that mpirun says exited on a signal."""
    return _at(
        line,
        "WorkloadFailed",
        "mpirun-rank-signal",
        f"rank {signal.group('rank')} exited on signal {signal.group('signal')}",
        signal.group("host"),
    )


class _Scan:
    """One pass over the lines; a finding may consume the lines that continue it.

    Attributes:
        items: the lines.
        index: the next line to read.
        in_test_failure: the previous lines were a nccl-tests failure or its stack, so a
            stack line that follows is part of it.
        findings: what was found so far, unmerged.

    """

    def __init__(self, lines: Iterable[LogLine]) -> None:
        self.items = list(lines)
        self.index = 0
        self.in_test_failure = False
        self.findings: list[Finding] = []

    def run(self) -> list[Finding]:
        """Read every line; return the findings in order."""
        while self.index < len(self.items):
            line = self.items[self.index]
            self.index += 1
            self.read(line, _clean(line))
        return self.findings

    def read(self, line: LogLine, text: str) -> None:
        """Classify one line (without prefixes): the one call the scan makes per line."""
        warn = _WARN_RE.search(text)
        if warn is not None:
            self.read_warn(line, text, warn.group("msg").strip())
            return
        test = _TEST_FAILURE_RE.search(text)
        if test is not None:
            self.in_test_failure = True
            self.findings.append(_test_failure_finding(line, test, self.fold_stack()))
            return
        stack = _TEST_STACK_RE.search(text)
        if stack is not None:
            if not self.in_test_failure:
                self.findings.append(_stack_finding(line, stack))
                self.in_test_failure = True
            return
        self.in_test_failure = False
        if _TRACEBACK_RE.search(text):
            after = self.items[self.index : self.index + _TRACEBACK_LOOKAHEAD]
            self.findings.append(_traceback_finding(line, after))
        elif (result := _NCCL_RESULT_RE.search(text)) is not None:
            self.findings.append(_result_finding(line, text, result))
        elif (signal := _MPIRUN_SIGNAL_RE.search(text)) is not None:
            self.findings.append(_signal_finding(line, signal))
        elif "NCCL INFO" not in text:  # e.g. "connect returned Connection refused, retrying"
            for rule in _PHRASE_RULES:
                if rule.pattern.search(text):
                    self.findings.append(_phrase_finding(line, text, rule))
                    break

    def read_warn(self, line: LogLine, text: str, message: str) -> None:
        """Record an ``NCCL WARN`` unless benign, joining its wrapped continuation line."""
        if _benign(message):
            return
        if self.index < len(self.items):
            follow = _clean(self.items[self.index])
            if not _NEW_RECORD_RE.match(follow) and not _WARN_RE.search(follow):
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


def detect_failures(lines: Iterable[LogLine]) -> list[Finding]:
    """Scan lines for failure messages.

    Args:
        lines: the lines of one or more logs, in order.

    Returns:
        The findings, merged and in order of first occurrence.

    """
    return _merge(_Scan(lines).run())
