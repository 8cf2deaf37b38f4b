"""The workload environment: NCCL defaults, the user's ``spec.env``, and MPI ``-x`` forwarding.

Invariants (NVCRE's precedence, lowest to highest):
    1. the base NCCL defaults (:data:`BASE_NCCL_ENV`, ``NCCL_MNNVL_ENABLE`` from MNNVL);
    2. platform container env (applied by the caller before the user's env);
    3. ``spec.env``: replaces a default or platform value of the same name;
    4. for MPI ranks only: a ``-x NAME=value`` in any mpiArgs beats everything, so a name
       already ``-x``'d in mpiArgs is never forwarded again.
    The merged list keeps the defaults' order, minus names the user sets, then the user's
    variables in the user's order. Values are passed as argv elements, never through a shell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Env:
    """One container environment variable; ``value_from`` set means a ``valueFrom`` source."""

    name: str
    value: str = ""
    value_from: dict[str, object] | None = None

    @property
    def x_value(self) -> str:
        """What ``mpirun -x`` forwards it with: ``NAME=value``, or ``NAME`` for ``valueFrom``."""
        return self.name if self.value_from is not None else f"{self.name}={self.value}"

    def to_k8s(self) -> dict[str, object]:
        """Render as a core/v1 EnvVar mapping."""
        if self.value_from is not None:
            return {"name": self.name, "valueFrom": self.value_from}
        return {"name": self.name, "value": self.value}


def base_nccl_env(mnnvl: bool) -> list[Env]:
    """NVCRE's base NCCL environment (newest branch, ten variables)."""
    return [
        Env("NCCL_DEBUG", "INFO"),
        Env("NCCL_DEBUG_SUBSYS", "NET,INIT"),
        Env("NCCL_NVLS_ENABLE", "1"),
        Env("NCCL_CUMEM_ENABLE", "1"),
        Env("NCCL_NET_GDR_C2C", "1"),
        Env("NCCL_NET_GDR_LEVEL", "PHB"),
        Env("NCCL_P2P_NET_CHUNKSIZE", "2097152"),
        Env("NCCL_SHM_DISABLE", "1"),
        Env("NCCL_MNNVL_ENABLE", "1" if mnnvl else "0"),
        Env("NCCL_SOCKET_IFNAME", "eth0"),
    ]


def merge_env(base: Iterable[Env], *layers: Sequence[Env]) -> list[Env]:
    """Overlay env layers; later layers win.

    Each layer drops the names it sets from what came before, then appends its own
    variables in its order.
    """
    merged = list(base)
    for layer in layers:
        first: dict[str, Env] = {}
        for e in layer:
            first.setdefault(e.name, e)
        merged = [e for e in merged if e.name not in first] + list(first.values())
    return merged


def merge_named(base: Sequence[Env], layer: Sequence[Env]) -> list[Env]:
    """Merge ``layer`` into ``base`` by name, as NVCRE merges a dependency patch's env.

    A name already in ``base`` keeps its position and takes the layer's value; a new name is
    appended in the layer's order.
    """
    merged = list(base)
    index = {e.name: i for i, e in enumerate(merged)}
    for e in layer:
        if e.name in index:
            merged[index[e.name]] = e
        else:
            index[e.name] = len(merged)
            merged.append(e)
    return merged


def user_wins_in_mpi_args(mpi_args: Sequence[str], user: Mapping[str, Env]) -> list[str]:
    """Replace each ``-x NAME=value`` of platform mpiArgs whose NAME the user sets in spec.env.

    NVCRE's BuildOverrides does the same (``mergeUserEnvIntoMPIArgs``): spec.env beats the
    platform table; a ``valueFrom`` variable is forwarded as a bare ``-x NAME``.
    """
    out = list(mpi_args)
    for i in range(len(out) - 1):
        if out[i] != "-x":
            continue
        name = out[i + 1].split("=", 1)[0]
        e = user.get(name)
        if e is not None:
            out[i + 1] = e.x_value
    return out


def forwarded_names(mpi_args: Sequence[str]) -> set[str]:
    """Names already forwarded with ``-x NAME[=value]`` in an mpirun argument list."""
    names: set[str] = set()
    for i, arg in enumerate(mpi_args):
        value: str | None = None
        if arg in ("-x", "--x") and i + 1 < len(mpi_args):
            value = mpi_args[i + 1]
        elif arg.startswith("-x") and len(arg) > 2 and arg[2] not in "-":
            value = arg[2:].lstrip("=")
        if value:
            names.add(value.split("=", 1)[0])
    return names


def forward_args(env: Sequence[Env], mpi_args: Sequence[str]) -> list[str]:
    """``-x`` arguments forwarding ``env`` to MPI ranks, skipping names ``mpi_args`` forward."""
    skip = forwarded_names(mpi_args)
    return [a for e in env if e.name not in skip for a in ("-x", e.x_value)]
