"""Strip the prefixes that launchers put in front of every line a rank prints.

The prefixes (``kubectl logs --prefix``/``--timestamps``, Open MPI, srun, torchrun, MPICH, pdsh)
are listed in docs/report.md and, one per line, in :data:`_LAYER_RE`; they may be stacked. A
pdsh/DeepSpeed ``host: `` prefix is removed only by :func:`strip_host_prefix`, because a
``word: `` prefix is ambiguous (``make: Entering directory``) and callers must decide.

ANSI colour codes (``ESC [ ... m`` and the other CSI sequences) are removed from the whole line
first by :func:`strip_ansi`, which :mod:`krm_fn.report.collect_logs` applies when it reads a log.

Invariants:
    * Stripping never changes the rest of the line (inner whitespace is kept, so column
      positions of nccl-tests rows survive).
    * The rank or host a prefix names is returned, never guessed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_KUBECTL_PREFIX_RE = re.compile(r"^\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]+)\] ")
_HOST_RE = re.compile(r"^(?P<host>[A-Za-z][A-Za-z0-9_.-]*):\s+")
_LAYER_RE = re.compile(
    r"(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}) )"  # --timestamps
    r"|^\[(?P<job>\d+),(?P<ompi>\d+)\]<(?:stdout|stderr)>:"  # Open MPI --tag-output
    r"|^(?P<srun>\d+): "  # srun --label
    r"|^\[(?:default|rank)(?P<torch>\d+)\]: ?"  # torchrun, PyTorch
    r"|^\[(?P<prepend>\d+)\] "  # MPICH/Intel MPI -prepend-rank
)
"""One launcher prefix of any kind (they may be stacked)."""


@dataclass(frozen=True)
class Stripped:
    """A line without its launcher prefixes, and the rank, host, timestamp, pod they named."""

    text: str
    rank: str | None = None
    host: str | None = None
    timestamp: str | None = None
    pod: str | None = None


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, cursor moves) from ``text``, and nothing else."""
    return _ANSI_RE.sub("", text) if "\x1b" in text else text


@functools.lru_cache(maxsize=1 << 17)
def strip_prefixes(line: str) -> Stripped:
    """Remove the unambiguous launcher prefixes from ``line`` (cached: parsers share lines)."""
    if not line or (line[0] != "[" and not line[0].isdigit()):
        return Stripped(line)  # every prefix starts with '[' or a digit
    found_pod = _KUBECTL_PREFIX_RE.match(line)
    pod = found_pod.group("pod") if found_pod else None
    text = line[found_pod.end() :] if found_pod else line
    rank: str | None = None
    timestamp: str | None = None
    for _ in range(4):
        found = _LAYER_RE.match(text)
        if found is None:
            break
        text = text[found.end() :]
        if found.group("ts") is not None:
            timestamp = timestamp or found.group("ts").strip()
        else:
            rank = rank or next(r for r in found.group("ompi", "srun", "torch", "prepend") if r)
    return Stripped(text, rank, None, timestamp, pod)


def strip_host_prefix(stripped: Stripped) -> Stripped:
    """Also remove a pdsh-style ``host: `` prefix from a line :func:`strip_prefixes` stripped."""
    found = _HOST_RE.match(stripped.text)
    if found is None:
        return stripped
    host, text = found.group("host"), stripped.text[found.end() :]
    return Stripped(text, stripped.rank, host, stripped.timestamp, stripped.pod)


def same_host(host: str, node: str) -> bool:
    """Whether a log's host name stands for a node: the same name, or the same first DNS label."""
    return host in (node, node.split(".")[0]) or host.split(".")[0] == node
