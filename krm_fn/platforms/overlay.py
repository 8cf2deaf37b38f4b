"""Resolving the platform table for one run: which entries match, and what they add up to.

For one :class:`PlatformContext` (platform, GPU model, framework, node shape and counts):
the :class:`ResolvedOverlay` of the matching entries, and the counts (:func:`make_context`).

Invariants:
    * :func:`resolve` is pure; the overlay's mappings and lists are fresh.
    * NVCRE's merge (docs/platforms.md), entries in evaluation order: ``env``/``trainerEnv``
      by name (a later value replaces in place); a later entry's ``mpiArgs`` go in FRONT
      (applyWRPreTemplateOverrides prepends), each followed by its ``forwardEnv`` as ``-x``;
      ``preCommand`` concatenates; ``resources``/``podAnnotations`` key by key (``None``
      deletes); ``securityContext`` deep-merges; ``tolerations`` and the volume pair are the
      last setter's; scalars are replaced; ``claimTemplates`` merge by claim name.
    * One value per variable: every copy of a name (``env``, ``trainerEnv``, ``forwardEnv``,
      ``-x`` in ``mpiArgs``) has the last matching entry's value, whatever delivers it.
    * ``mpi``: ``forwardEnv`` becomes ``-x`` pairs; ``torch``/``exec``: ``trainer_env``.
    * Templates are rendered everywhere; a resolved claim has an integer count > 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from krm_fn.platforms.catalog import FRAMEWORKS, Catalog, CatalogEntry, ClaimTemplate, EnvVarSpec
from krm_fn.platforms.detect import (
    GKE_ACCELERATOR_LABEL,
    INSTANCE_TYPE_LABEL,
    distinct_label_values,
)
from krm_fn.platforms.gpu import parse_gpu_product
from krm_fn.platforms.templates import render, render_resource


class EnvVar(NamedTuple):
    """A resolved environment variable."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class PlatformContext:
    """What the entries are matched against, and the numbers their templates get.

    ``instance_types``/``gke_accelerators``: the distinct shape labels of the eligible nodes;
    ``gpus_from``: where ``gpus_per_node`` comes from (``spec``, an entry, ``gpu-defaults``).
    Any platform string is accepted (``"unknown"`` matches entries without a platform).
    """

    platform: str
    gpu_architecture: str
    framework: str
    instance_types: frozenset[str]
    gke_accelerators: frozenset[str]
    gpus_per_node: int
    nics_per_node: int
    mnnvl: bool = False
    gpus_from: str = ""

    def __post_init__(self) -> None:
        """Refuse a framework the table does not know, and negative counts."""
        if self.framework not in FRAMEWORKS:
            raise ValueError(
                f"unknown framework {self.framework!r}: must be one of {', '.join(FRAMEWORKS)}"
            )
        if self.gpus_per_node < 0 or self.nics_per_node < 0:
            raise ValueError("gpus_per_node and nics_per_node must be >= 0")


@dataclass(frozen=True, slots=True)
class ResolvedOverlay:
    """The merged settings of the entries that matched a context (defaults: of none)."""

    applied: tuple[str, ...] = ()
    env: tuple[EnvVar, ...] = ()
    forward_env: tuple[EnvVar, ...] = ()
    mpi_args: tuple[str, ...] = ()
    resources: Mapping[str, Mapping[str, str | int | None]] = field(default_factory=dict)
    volumes: tuple[Mapping[str, Any], ...] = ()
    volume_mounts: tuple[Mapping[str, Any], ...] = ()
    security_context: Mapping[str, Any] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    pod_annotations: Mapping[str, str] = field(default_factory=dict)
    topology_key: str | None = None
    pre_command: tuple[str, ...] = ()
    nic_resource_name: str | None = None
    trainer_env: tuple[EnvVar, ...] = ()
    compute_domain: bool = False
    claim_templates: tuple[ClaimTemplate, ...] = ()


def _shape_ok(allowed: list[str] | None, actual: frozenset[str], default: bool) -> bool:
    if allowed is None:
        return True
    return actual <= set(allowed) if actual else default


def _entries(
    catalog: Catalog, platform: str, arch: str, framework: str, shapes: Sequence[frozenset[str]]
) -> tuple[CatalogEntry, ...]:
    """The entries whose ``when`` holds, in evaluation order (shapes: instance types, GKE)."""
    arch = parse_gpu_product(arch)
    return tuple(
        e
        for e in catalog.entries
        if (e.when.platform is None or platform in e.when.platform)
        and (e.when.gpu_architecture is None or arch in e.when.gpu_architecture)
        and (e.when.frameworks is None or framework in e.when.frameworks)
        and _shape_ok(e.when.instance_types, shapes[0], e.when.default_shape)
        and _shape_ok(e.when.gke_accelerator, shapes[1], e.when.default_shape)
    )


def _merge_env(
    target: dict[str, str], items: Iterable[EnvVarSpec] | None, variables: Mapping[str, int]
) -> dict[str, str]:
    for var in items or ():
        if var.when_gpus_per_node is None or variables["gpusPerNode"] in var.when_gpus_per_node:
            target[var.name] = render(var.value, variables)
    return target


def _x_pairs(args: list[str]) -> Iterable[tuple[int, str, str]]:
    """(index of the value, NAME, value) of every ``-x NAME=value`` in an argument list."""
    for i in range(len(args) - 1):
        if args[i] == "-x" and "=" in args[i + 1]:
            name, value = args[i + 1].split("=", 1)
            yield i + 1, name, value


def _env(entries: Sequence[CatalogEntry], variables: Mapping[str, int], mpi: bool) -> Any:
    """(env, forward_env, trainer_env, mpi_args, pre_command), each variable at its last value."""
    env: dict[str, str] = {}
    forward: dict[str, str] = {}
    trainer: dict[str, str] = {}
    final: dict[str, str] = {}
    mpi_args: list[str] = []
    pre: list[str] = []
    for e in entries:
        for items in (e.env, e.trainer_env, e.forward_env):
            _merge_env(final, items, variables)
        _merge_env(env, e.env, variables)
        _merge_env(trainer, e.trainer_env, variables)
        if mpi:  # NVCRE prepends each entry's mpiArgs: a later entry's come first
            own = [render(arg, variables) for arg in e.mpi_args or ()]
            pairs = _merge_env({}, e.forward_env, variables)
            own += [arg for name, value in pairs.items() for arg in ("-x", f"{name}={value}")]
            final.update((name, value) for _, name, value in _x_pairs(own))
            mpi_args[:0] = own
            _merge_env(forward, e.forward_env, variables)
        else:
            _merge_env(trainer, e.forward_env, variables)
        pre += [render(line, variables) for line in e.pre_command or ()]
    for i, name, _ in _x_pairs(mpi_args):
        mpi_args[i] = f"{name}={final[name]}"
    frozen = [tuple(EnvVar(k, final[k]) for k in d) for d in (env, forward, trainer)]
    return (*frozen, tuple(mpi_args), tuple(pre))


def _resources(entries: Sequence[CatalogEntry], variables: Mapping[str, int]) -> Any:
    """The merged ``limits``/``requests`` (``None``: delete the name; empty sections left out)."""
    out: dict[str, dict[str, str | int | None]] = {}
    for e in entries:
        if e.resources is None:
            continue
        for section, values in (("limits", e.resources.limits), ("requests", e.resources.requests)):
            target = out.setdefault(section, {})
            for name, raw in values.items():
                rendered = None if raw is None else render_resource(raw, variables)
                if raw is not None and rendered is None:
                    target.pop(name, None)  # a templated 0
                else:
                    target[name] = rendered
    return {section: values for section, values in out.items() if values}


def _pod(entries: Sequence[CatalogEntry], variables: Mapping[str, int]) -> dict[str, Any]:
    """Volumes, securityContext, tolerations, annotations and the scalars of the entries.

    Only what an entry sets; :class:`ResolvedOverlay`'s defaults are the rest.
    """
    pod: dict[str, Any] = {"security_context": {}}
    annotations: dict[str, str] = {}
    for e in entries:
        if e.volumes is not None and e.volume_mounts is not None:
            pod["volumes"] = tuple(v.k8s() for v in e.volumes)
            pod["volume_mounts"] = tuple(m.k8s() for m in e.volume_mounts)
        if e.security_context is not None:
            _deep_merge(pod["security_context"], e.security_context.k8s())
        if e.tolerations is not None:
            pod["tolerations"] = tuple(t.k8s() for t in e.tolerations)
        annotations.update((k, render(v, variables)) for k, v in (e.pod_annotations or {}).items())
        pod["topology_key"] = e.topology_key or pod.get("topology_key")
        pod["nic_resource_name"] = e.nic_resource_name or pod.get("nic_resource_name")
    return {**pod, "pod_annotations": annotations}


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _deep_merge(base[key], value)
        else:
            base[key] = value


def _claims(
    entries: Sequence[CatalogEntry], variables: Mapping[str, int]
) -> tuple[ClaimTemplate, ...]:
    claims: dict[str, ClaimTemplate | None] = {}
    for e in entries:
        for spec in e.claim_templates or ():
            count = render_resource(spec.count, variables)
            ok = isinstance(count, int) and count > 0  # a count that renders 0 drops the claim
            claims[spec.claim] = spec.model_copy(update={"count": count}) if ok else None
    return tuple(c for c in claims.values() if c is not None)


def resolve(catalog: Catalog, ctx: PlatformContext) -> ResolvedOverlay:
    """Merge every entry matching ``ctx`` into one overlay; ``applied`` names them in order."""
    variables = {
        "gpusPerNode": ctx.gpus_per_node,
        "nicsPerNode": ctx.nics_per_node,
        "enableMNNVL": 1 if ctx.mnnvl else 0,
    }
    shapes = (ctx.instance_types, ctx.gke_accelerators)
    entries = _entries(catalog, ctx.platform, ctx.gpu_architecture, ctx.framework, shapes)
    env, forward, trainer, mpi_args, pre = _env(entries, variables, ctx.framework == "mpi")
    return ResolvedOverlay(
        applied=tuple(e.name for e in entries),
        env=env,
        forward_env=forward,
        mpi_args=mpi_args,
        resources=_resources(entries, variables),
        pre_command=pre,
        trainer_env=trainer,
        compute_domain=any(e.compute_domain for e in entries),
        claim_templates=_claims(entries, variables),
        **_pod(entries, variables),
    )


# --------------------------------------------------------------------------- contexts


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
    """The context of the eligible nodes (their shape labels) and the spec's explicit values.

    Counts: the explicit value (0 is one) > a matching shape entry's ``gpusPerNode``/
    ``nicsPerNode`` (later wins; e.g. 32 EFA adapters on ``p5.48xlarge``) > the GPU defaults.
    """
    node_list = list(nodes)
    shapes = (
        distinct_label_values(node_list, INSTANCE_TYPE_LABEL),
        distinct_label_values(node_list, GKE_ACCELERATOR_LABEL),
    )
    arch = parse_gpu_product(gpu_architecture)
    base = catalog.gpu_defaults(arch, platform)
    gpus, nics, gpus_from = base.gpus_per_node, base.nics_per_node, "gpu-defaults"
    for entry in _entries(catalog, platform, arch, framework, shapes):
        if entry.gpus_per_node is not None:
            gpus, gpus_from = entry.gpus_per_node, entry.name
        nics = nics if entry.nics_per_node is None else entry.nics_per_node
    if gpus_per_node is not None:
        gpus, gpus_from = gpus_per_node, "spec"
    return PlatformContext(
        platform=platform,
        gpu_architecture=arch,
        framework=framework,
        instance_types=shapes[0],
        gke_accelerators=shapes[1],
        gpus_per_node=gpus,
        nics_per_node=nics if nics_per_node is None else nics_per_node,
        mnnvl=base.mnnvl if mnnvl is None else mnnvl,
        gpus_from=gpus_from,
    )
