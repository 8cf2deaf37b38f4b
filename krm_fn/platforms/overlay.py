"""Resolving the catalog for one run: which entries match, and what they add up to.

One job: for one :class:`PlatformContext` (platform × GPU architecture × framework × node
shape × node counts), pick the matching catalog entries and merge them into one
:class:`ResolvedOverlay` that the render applies; and the per-node counts a context starts
from (:func:`default_node_counts`, :func:`make_context`).

Invariants:
    * :func:`resolve` is pure: the same catalog and context always give an equal
      overlay, and every mapping/list in the overlay is a fresh copy (mutating it never
      changes the catalog).
    * Merge semantics (NVCRE's, see docs/platforms.md; entries in evaluation order):
      ``env`` and ``trainerEnv`` merge by name (a later value replaces an earlier one in
      place; order = first appearance); ``mpiArgs`` of a later entry go in FRONT of the
      earlier ones (NVCRE's applyWRPreTemplateOverrides prepends), each entry's
      ``forwardEnv`` following its own ``mpiArgs`` as ``-x NAME=value``; ``preCommand``
      lines concatenate in entry order; maps (``resources.limits``/``requests``,
      ``podAnnotations``) merge key by key and a ``None`` resource deletes the name;
      ``securityContext`` deep-merges maps while its lists replace; ``tolerations`` and the
      ``volumes`` + ``volumeMounts`` pair are replaced by the last entry that sets them;
      scalars (``topologyKey``, ``nicResourceName``) are replaced; ``computeDomain`` is set
      when any entry sets it; ``claimTemplates`` merge by claim name.
    * One value per variable: whichever setting carries a name (``env``, ``trainerEnv``,
      ``forwardEnv``, a ``-x NAME=value`` in ``mpiArgs``), every copy of it in the overlay has
      the value of the last matching entry that sets it (NVCRE's table order), so the value
      that reaches the ranks does not depend on which mechanism delivers it.
    * Framework handling: for ``mpi`` the ``forwardEnv`` of each entry becomes ``-x`` pairs in
      ``mpi_args`` (and is listed in ``forward_env``); for ``torch``/``exec`` it joins
      ``trainer_env`` (the TrainJob's ``spec.trainer.env``) and ``mpi_args`` is empty.
    * Templates (:mod:`krm_fn.platforms.templates`) are substituted in env values, mpiArgs,
      preCommand, podAnnotations, resources and claim counts; a resolved
      :class:`~krm_fn.platforms.catalog.ClaimTemplate` always has an integer count > 0.
    * Stdlib only: it is on the render path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from krm_fn.platforms.catalog import (
    FRAMEWORKS,
    Catalog,
    CatalogEntry,
    ClaimTemplate,
    EnvVarSpec,
    When,
)
from krm_fn.platforms.detect import (
    GKE_ACCELERATOR_LABEL,
    INSTANCE_TYPE_LABEL,
    distinct_label_values,
)
from krm_fn.platforms.gpu import parse_gpu_product
from krm_fn.platforms.templates import render, render_resource

__all__ = [
    "EnvVar",
    "NodeCounts",
    "PlatformContext",
    "ResolvedOverlay",
    "default_node_counts",
    "make_context",
    "matching_entries",
    "resolve",
]


class EnvVar(NamedTuple):
    """A resolved environment variable."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class PlatformContext:
    """What the resolver matches catalog entries against.

    Attributes:
        platform: Detected or forced platform (normally a member of ``PLATFORMS``).
        gpu_architecture: Detected or forced architecture (``"unknown"`` allowed).
        framework: ``"mpi"``, ``"torch"`` or ``"exec"``.
        instance_types: Distinct ``node.kubernetes.io/instance-type`` values of the
            eligible nodes (may be empty).
        gke_accelerators: Distinct ``cloud.google.com/gke-accelerator`` values.
        gpus_per_node: Value substituted for ``{gpusPerNode}``.
        nics_per_node: Value substituted for ``{nicsPerNode}``.
        mnnvl: Multi-node NVLink on: ``{enableMNNVL}`` renders ``1`` (else ``0``).

    """

    platform: str
    gpu_architecture: str
    framework: str
    instance_types: frozenset[str]
    gke_accelerators: frozenset[str]
    gpus_per_node: int
    nics_per_node: int
    mnnvl: bool = False

    def __post_init__(self) -> None:
        """Refuse contexts the catalog cannot match meaningfully.

        Any platform string is accepted (e.g. ``"unknown"`` after a failed detection): it
        simply matches only entries without ``when.platform``.
        """
        if self.framework not in FRAMEWORKS:
            raise ValueError(
                f"unknown framework {self.framework!r}: must be one of {', '.join(FRAMEWORKS)}"
            )
        if self.gpus_per_node < 0 or self.nics_per_node < 0:
            raise ValueError("gpus_per_node and nics_per_node must be >= 0")


@dataclass(frozen=True, slots=True)
class ResolvedOverlay:
    """The merged settings of every catalog entry that matched a context.

    See the module docstring for the merge rules. Mappings and lists are fresh copies.
    """

    applied: tuple[str, ...]
    env: tuple[EnvVar, ...]
    forward_env: tuple[EnvVar, ...]
    mpi_args: tuple[str, ...]
    resources: Mapping[str, Mapping[str, str | int | None]]
    volumes: tuple[Mapping[str, Any], ...]
    volume_mounts: tuple[Mapping[str, Any], ...]
    security_context: Mapping[str, Any]
    tolerations: tuple[Mapping[str, Any], ...]
    pod_annotations: Mapping[str, str]
    topology_key: str | None
    pre_command: tuple[str, ...]
    nic_resource_name: str | None
    trainer_env: tuple[EnvVar, ...] = ()
    compute_domain: bool = False
    claim_templates: tuple[ClaimTemplate, ...] = ()


def _shape_matches(allowed: list[str] | None, actual: frozenset[str], default: bool) -> bool:
    if allowed is None:
        return True
    if not actual:
        return default
    return actual <= set(allowed)


def _when_matches(
    when: When,
    *,
    platform: str,
    gpu_architecture: str,
    framework: str,
    instance_types: frozenset[str],
    gke_accelerators: frozenset[str],
) -> bool:
    return (
        (when.platform is None or platform in when.platform)
        and (when.gpu_architecture is None or gpu_architecture in when.gpu_architecture)
        and (when.frameworks is None or framework in when.frameworks)
        and _shape_matches(when.instance_types, instance_types, when.default_shape)
        and _shape_matches(when.gke_accelerator, gke_accelerators, when.default_shape)
    )


def _matching(
    catalog: Catalog,
    *,
    platform: str,
    gpu_architecture: str,
    framework: str,
    instance_types: frozenset[str],
    gke_accelerators: frozenset[str],
) -> tuple[CatalogEntry, ...]:
    arch = parse_gpu_product(gpu_architecture)
    return tuple(
        entry
        for entry in catalog.entries
        if _when_matches(
            entry.when,
            platform=platform,
            gpu_architecture=arch,
            framework=framework,
            instance_types=instance_types,
            gke_accelerators=gke_accelerators,
        )
    )


def matching_entries(catalog: Catalog, ctx: PlatformContext) -> tuple[CatalogEntry, ...]:
    """Return the entries whose ``when`` matches ``ctx``, in catalog order.

    Args:
        catalog: The catalog.
        ctx: The context.

    Returns:
        The matching entries.

    """
    return _matching(
        catalog,
        platform=ctx.platform,
        gpu_architecture=ctx.gpu_architecture,
        framework=ctx.framework,
        instance_types=ctx.instance_types,
        gke_accelerators=ctx.gke_accelerators,
    )


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` merged into ``base`` (fresh dumps of the catalog's models: no copy needed)."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _deep_merge(base[key], value)
        else:
            base[key] = value
    return base


def _merge_env(
    target: dict[str, str], items: Iterable[EnvVarSpec], variables: Mapping[str, int]
) -> None:
    gpus = variables["gpusPerNode"]
    for var in items:
        if var.when_gpus_per_node is None or gpus in var.when_gpus_per_node:
            target[var.name] = render(var.value, variables)


def _to_mpi_args(items: Iterable[EnvVarSpec], variables: Mapping[str, int]) -> list[str]:
    """NVCRE's ``toMpiArgs``: ``-x NAME=value`` per variable, in order."""
    env: dict[str, str] = {}
    _merge_env(env, items, variables)
    return [arg for name, value in env.items() for arg in ("-x", f"{name}={value}")]


def _x_pairs(args: list[str]) -> Iterable[tuple[int, str, str]]:
    """(index of the value, NAME, value) of every ``-x NAME=value`` in an argument list."""
    for i in range(len(args) - 1):
        if args[i] == "-x" and "=" in args[i + 1]:
            name, value = args[i + 1].split("=", 1)
            yield i + 1, name, value


@dataclass(slots=True)
class _Merge:
    """The settings of the entries merged so far, in the module docstring's rules.

    Mutable, private to :func:`resolve`, which freezes it into a :class:`ResolvedOverlay`.
    """

    variables: Mapping[str, int]
    mpi: bool
    applied: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    forward_env: dict[str, str] = field(default_factory=dict)
    trainer_env: dict[str, str] = field(default_factory=dict)
    mpi_args: list[str] = field(default_factory=list)
    final: dict[str, str] = field(default_factory=dict)  # each variable's last value
    resources: dict[str, dict[str, str | int | None]] = field(default_factory=dict)
    volumes: tuple[dict[str, Any], ...] = ()
    volume_mounts: tuple[dict[str, Any], ...] = ()
    security_context: dict[str, Any] = field(default_factory=dict)
    tolerations: tuple[dict[str, Any], ...] = ()
    pod_annotations: dict[str, str] = field(default_factory=dict)
    topology_key: str | None = None
    pre_command: list[str] = field(default_factory=list)
    nic_resource_name: str | None = None
    compute_domain: bool = False
    claims: dict[str, ClaimTemplate | None] = field(default_factory=dict)

    def add(self, entry: CatalogEntry) -> None:
        """Merge one matching entry (entries come in catalog order)."""
        self.applied.append(entry.name)
        self._add_env(entry)
        self._add_resources(entry)
        self._add_pod(entry)
        self._add_dra(entry)

    def _add_env(self, entry: CatalogEntry) -> None:
        variables = self.variables
        for items in (entry.env, entry.trainer_env, entry.forward_env):
            _merge_env(self.final, items or (), variables)
        _merge_env(self.env, entry.env or (), variables)
        _merge_env(self.trainer_env, entry.trainer_env or (), variables)
        if self.mpi:
            # NVCRE prepends each matching entry's mpiArgs to the ones before it
            # (applyWRPreTemplateOverrides), so a later entry's arguments come first.
            own = [render(arg, variables) for arg in entry.mpi_args or ()]
            own += _to_mpi_args(entry.forward_env or (), variables)
            self.final.update((name, value) for _, name, value in _x_pairs(own))
            self.mpi_args[:0] = own
            _merge_env(self.forward_env, entry.forward_env or (), variables)
        else:
            _merge_env(self.trainer_env, entry.forward_env or (), variables)
        if entry.pre_command is not None:
            self.pre_command += [render(line, variables) for line in entry.pre_command]

    def _add_resources(self, entry: CatalogEntry) -> None:
        if entry.resources is None:
            return
        for section in ("limits", "requests"):
            for name, raw in getattr(entry.resources, section).items():
                target = self.resources.setdefault(section, {})
                if raw is None:
                    target[name] = None  # deletes the name on the container
                    continue
                rendered = render_resource(raw, self.variables)
                if rendered is None:
                    target.pop(name, None)
                else:
                    target[name] = rendered
        if entry.nic_resource_name is not None:
            self.nic_resource_name = entry.nic_resource_name

    def _add_pod(self, entry: CatalogEntry) -> None:
        if entry.volumes is not None and entry.volume_mounts is not None:
            self.volumes = tuple([v.k8s() for v in entry.volumes])
            self.volume_mounts = tuple([m.k8s() for m in entry.volume_mounts])
        if entry.security_context is not None:
            _deep_merge(self.security_context, entry.security_context.k8s())
        if entry.tolerations is not None:
            self.tolerations = tuple([t.k8s() for t in entry.tolerations])
        for key, value in (entry.pod_annotations or {}).items():
            self.pod_annotations[key] = render(value, self.variables)
        if entry.topology_key is not None:
            self.topology_key = entry.topology_key

    def _add_dra(self, entry: CatalogEntry) -> None:
        self.compute_domain = self.compute_domain or entry.compute_domain
        for spec in entry.claim_templates or ():
            count = render_resource(spec.count, self.variables)
            self.claims[spec.claim] = (
                spec.model_copy(update={"count": count})
                if isinstance(count, int) and count > 0
                else None
            )

    def _vars(self, env: Mapping[str, str]) -> tuple[EnvVar, ...]:
        return tuple(EnvVar(k, self.final.get(k, v)) for k, v in env.items())

    def overlay(self) -> ResolvedOverlay:
        """The merged settings as the immutable overlay (each variable at its last value)."""
        mpi_args = list(self.mpi_args)
        for i, name, _ in _x_pairs(mpi_args):
            mpi_args[i] = f"{name}={self.final[name]}"
        return ResolvedOverlay(
            applied=tuple(self.applied),
            env=self._vars(self.env),
            forward_env=self._vars(self.forward_env),
            mpi_args=tuple(mpi_args),
            resources={section: values for section, values in self.resources.items() if values},
            volumes=self.volumes,
            volume_mounts=self.volume_mounts,
            security_context=self.security_context,
            tolerations=self.tolerations,
            pod_annotations=self.pod_annotations,
            topology_key=self.topology_key,
            pre_command=tuple(self.pre_command),
            nic_resource_name=self.nic_resource_name,
            trainer_env=self._vars(self.trainer_env),
            compute_domain=self.compute_domain,
            claim_templates=tuple(c for c in self.claims.values() if c is not None),
        )


def resolve(catalog: Catalog, ctx: PlatformContext) -> ResolvedOverlay:
    """Merge every catalog entry matching ``ctx`` into one overlay.

    Args:
        catalog: The catalog (see :func:`~krm_fn.platforms.load.load_catalog`).
        ctx: Platform, GPU architecture, framework, node shape and node counts.

    Returns:
        The overlay; ``applied`` lists the matched entry names in order.

    """
    variables = {
        "gpusPerNode": ctx.gpus_per_node,
        "nicsPerNode": ctx.nics_per_node,
        "enableMNNVL": 1 if ctx.mnnvl else 0,
    }
    merge = _Merge(variables, mpi=ctx.framework == "mpi")
    for entry in matching_entries(catalog, ctx):
        merge.add(entry)
    return merge.overlay()


# --------------------------------------------------------------------------- contexts


@dataclass(frozen=True, slots=True)
class NodeCounts:
    """Default GPUs and NICs per node for a context, and where each value came from.

    Attributes:
        gpus_per_node: GPUs per node.
        nics_per_node: NICs per node.
        mnnvl: Multi-node NVLink default (from the architecture).
        gpus_from: ``"spec"``, the catalog entry name, or ``"gpu-defaults"``.
        nics_from: Same, for ``nics_per_node``.

    """

    gpus_per_node: int
    nics_per_node: int
    mnnvl: bool
    gpus_from: str
    nics_from: str


def default_node_counts(
    catalog: Catalog,
    *,
    platform: str,
    gpu_architecture: str,
    framework: str,
    instance_types: frozenset[str] = frozenset(),
    gke_accelerators: frozenset[str] = frozenset(),
    gpus_per_node: int | None = None,
    nics_per_node: int | None = None,
) -> NodeCounts:
    """Layer the per-node counts: explicit value > catalog entry > GPU defaults.

    Catalog entries that match (later wins) may set ``gpusPerNode``/``nicsPerNode`` for
    a shape, e.g. 32 EFA adapters on ``p5.48xlarge``; otherwise
    the table's GPU defaults for (architecture, platform) apply.

    Args:
        catalog: The catalog.
        platform: Platform name.
        gpu_architecture: Architecture or product name.
        framework: Framework kind.
        instance_types: Distinct instance types of the eligible nodes.
        gke_accelerators: Distinct GKE accelerators of the eligible nodes.
        gpus_per_node: Explicit value (``spec.gpusPerNode``), wins when not ``None``.
        nics_per_node: Explicit value (``spec.mlnxPerNode``), wins when not ``None``;
            0 is a value.

    Returns:
        The counts and their provenance.

    """
    base = catalog.gpu_defaults(parse_gpu_product(gpu_architecture), platform)
    gpus, gpus_from = base.gpus_per_node, "gpu-defaults"
    nics, nics_from = base.nics_per_node, "gpu-defaults"
    for entry in _matching(
        catalog,
        platform=platform,
        gpu_architecture=gpu_architecture,
        framework=framework,
        instance_types=instance_types,
        gke_accelerators=gke_accelerators,
    ):
        if entry.gpus_per_node is not None:
            gpus, gpus_from = entry.gpus_per_node, entry.name
        if entry.nics_per_node is not None:
            nics, nics_from = entry.nics_per_node, entry.name
    if gpus_per_node is not None:
        gpus, gpus_from = gpus_per_node, "spec"
    if nics_per_node is not None:
        nics, nics_from = nics_per_node, "spec"
    return NodeCounts(gpus, nics, base.mnnvl, gpus_from, nics_from)


def make_context(
    catalog: Catalog,
    *,
    platform: str,
    gpu_architecture: str,
    framework: str,
    nodes: Iterable[Mapping[str, Any]] = (),
    gpus_per_node: int | None = None,
    nics_per_node: int | None = None,
    mnnvl: bool | None = None,
) -> PlatformContext:
    """Build a :class:`PlatformContext` from the eligible nodes and explicit counts.

    Args:
        catalog: The catalog (for shape-specific node counts).
        platform: Detected or forced platform.
        gpu_architecture: Detected or forced architecture (normalised here).
        framework: ``"mpi"``, ``"torch"`` or ``"exec"``.
        nodes: The eligible Node dicts (their shape labels are read).
        gpus_per_node: ``spec.gpusPerNode`` if set.
        nics_per_node: ``spec.mlnxPerNode`` if set.
        mnnvl: ``spec.enableMNNVL`` if set (else the architecture's default).

    Returns:
        The context, ready for :func:`resolve`.

    """
    node_list = list(nodes)
    instance_types = distinct_label_values(node_list, INSTANCE_TYPE_LABEL)
    gke_accelerators = distinct_label_values(node_list, GKE_ACCELERATOR_LABEL)
    arch = parse_gpu_product(gpu_architecture)
    counts = default_node_counts(
        catalog,
        platform=platform,
        gpu_architecture=arch,
        framework=framework,
        instance_types=instance_types,
        gke_accelerators=gke_accelerators,
        gpus_per_node=gpus_per_node,
        nics_per_node=nics_per_node,
    )
    return PlatformContext(
        platform=platform,
        gpu_architecture=arch,
        framework=framework,
        instance_types=instance_types,
        gke_accelerators=gke_accelerators,
        gpus_per_node=counts.gpus_per_node,
        nics_per_node=counts.nics_per_node,
        mnnvl=counts.mnnvl if mnnvl is None else mnnvl,
    )
