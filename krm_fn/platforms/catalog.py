"""The platform override catalog's values: immutable entries built from the parsed file.

One job: the typed, frozen values of ``krm_fn/data/platforms.yaml`` (:class:`Catalog`,
:class:`CatalogEntry` and its parts) and :func:`build_catalog`, which turns a parsed and
valid catalog document into them.

Neighbours (one job each):

* :mod:`krm_fn.platforms.catalog_file` — the file's schema (pydantic v2) and its validation;
  :func:`~krm_fn.platforms.catalog_file.parse_catalog` for YAML text.
* :mod:`krm_fn.platforms.templates` — the ``{gpusPerNode}``-style templates in values.
* :mod:`krm_fn.platforms.snapshot` — the JSON snapshot ``krm_fn/data/platforms.json``.
* :mod:`krm_fn.platforms.load` — :func:`~krm_fn.platforms.load.load_catalog`.
* :mod:`krm_fn.platforms.overlay` — matching entries to a context and merging them.

Invariants:
    * Every class is a frozen dataclass with ``__slots__``: a catalog compares, hashes and
      pickles by value and cannot be changed after it is built.
    * :func:`build_catalog` does not validate: its input is a document the file schema
      accepted (the YAML of :func:`~krm_fn.platforms.catalog_file.parse_catalog`, or the
      snapshot, validated by the tests), so the bundled catalog loads without pydantic.
    * ``None`` means "not set" for every setting of an entry (an explicit ``[]`` is a value).
    * Stdlib only, cheap to import: it is on the render path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DEFAULT_CATALOG_PATH",
    "DEFAULT_CATALOG_RESOURCE",
    "FRAMEWORKS",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "ClaimTemplate",
    "EnvVar",
    "EnvVarSpec",
    "Framework",
    "ResourcesSpec",
    "WhenSpec",
    "build_catalog",
    "read_text",
]

DEFAULT_CATALOG_RESOURCE = "data/platforms.yaml"
"""Location of the bundled catalog inside the ``krm_fn`` package."""

_PACKAGE_DIR = os.path.dirname(os.path.dirname(__file__))
DEFAULT_CATALOG_PATH = os.path.join(_PACKAGE_DIR, "data", "platforms.yaml")
"""The bundled catalog file (wheel and editable installs alike)."""

FRAMEWORKS: tuple[str, ...] = ("exec", "mpi", "torch")
"""WorkloadRun framework kinds an entry can be restricted to, sorted."""

Framework = Literal["mpi", "torch", "exec"]


class CatalogError(ValueError):
    """The catalog file is unreadable or invalid.

    Attributes:
        problems: One line per problem, each naming the entry and the field.

    """

    def __init__(self, origin: str, problems: Sequence[str]) -> None:
        """Build the error.

        Args:
            origin: Where the catalog came from (a path or resource name).
            problems: The individual problems.

        """
        self.problems = tuple(problems)
        super().__init__(f"invalid platform catalog {origin}:\n  " + "\n  ".join(self.problems))


def read_text(path: str | Path, origin: str) -> str:
    """The text of a catalog file; an unreadable file is a :class:`CatalogError`."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise CatalogError(origin, [f"cannot read: {exc}"]) from exc


@dataclass(frozen=True, slots=True)
class EnvVar:
    """An environment variable: a resolved one, and the base of :class:`EnvVarSpec`."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class EnvVarSpec(EnvVar):
    """One ``{name, value}`` environment variable in the catalog (values may be templates).

    ``when_gpus_per_node`` (YAML ``whenGpusPerNode``) limits the variable to those GPU
    counts per node (NVCRE's ``NCCL_P2P_LEVEL`` on GCP G4 depends on the machine size).
    """

    when_gpus_per_node: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class ClaimTemplate:
    """A DRA ``ResourceClaimTemplate`` an entry adds, and the pod claim that uses it.

    The same value before and after resolving: in a :class:`CatalogEntry` the count may be a
    template (``"{gpusPerNode|int}"`` / ``"{nicsPerNode|int}"``); in a resolved overlay
    (:func:`krm_fn.platforms.overlay.resolve`) it is always an integer > 0 (a count that
    renders to 0 drops the template and the claim).

    Attributes:
        claim: The pod's ``resourceClaims[].name`` (and the ``node`` container's claim).
        suffix: The template is named ``<run>-<suffix>``.
        request: ``spec.spec.devices.requests[0].name``.
        device_class: ``exactly.deviceClassName``.
        count: ``exactly.count``: an integer, or (in the catalog) an ``|int`` template.

    """

    claim: str
    suffix: str
    request: str
    device_class: str
    count: int | str


@dataclass(frozen=True, slots=True)
class WhenSpec:
    """When an entry applies. Every condition that is set must hold (logical AND).

    Attributes:
        platform: Platform names; ``None`` = any platform.
        gpu_architecture: Architectures; ``None`` = any (including ``unknown``).
        frameworks: Framework kinds; ``None`` = all.
        instance_types: Allowed ``node.kubernetes.io/instance-type`` values: matches
            when every eligible node's instance type is listed.
        gke_accelerator: Allowed ``cloud.google.com/gke-accelerator`` values, same rule.
        default_shape: Also match when no eligible node carries the shape label(s)
            (offline preview, synthetic nodes): this entry is the pair's default shape.

    """

    platform: tuple[str, ...] | None = None
    gpu_architecture: tuple[str, ...] | None = None
    frameworks: tuple[Framework, ...] | None = None
    instance_types: tuple[str, ...] | None = None
    gke_accelerator: tuple[str, ...] | None = None
    default_shape: bool = False


@dataclass(frozen=True, slots=True)
class ResourcesSpec:
    """Container resource ``limits``/``requests`` added by an entry.

    Values may be templates; ``None`` (YAML ``null``) deletes the name from the container,
    as NVCRE's ``nvidia.com/gpu: null`` does where DRA claims replace the device plugin.
    """

    limits: Mapping[str, str | int | None] = field(default_factory=dict)
    requests: Mapping[str, str | int | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One ordered catalog entry: a ``when`` condition and the settings it contributes.

    ``None`` means "not set" for every setting (an explicit ``[]`` is a value).
    """

    name: str
    source: str
    inferred: bool = False
    when: WhenSpec = field(default_factory=WhenSpec)
    env: tuple[EnvVarSpec, ...] | None = None
    forward_env: tuple[EnvVarSpec, ...] | None = None
    mpi_args: tuple[str, ...] | None = None
    resources: ResourcesSpec | None = None
    nic_resource_name: str | None = None
    volumes: tuple[dict[str, Any], ...] | None = None
    volume_mounts: tuple[dict[str, Any], ...] | None = None
    security_context: dict[str, Any] | None = None
    tolerations: tuple[dict[str, Any], ...] | None = None
    pod_annotations: dict[str, str] | None = None
    topology_key: str | None = None
    pre_command: tuple[str, ...] | None = None
    gpus_per_node: int | None = None
    nics_per_node: int | None = None
    trainer_env: tuple[EnvVarSpec, ...] | None = None
    compute_domain: bool = False
    claim_templates: tuple[ClaimTemplate, ...] | None = None


@dataclass(frozen=True, slots=True)
class Catalog:
    """The whole catalog: a format version and the ordered entries."""

    version: Literal[1]
    entries: tuple[CatalogEntry, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """Entry names in catalog order."""
        return tuple(e.name for e in self.entries)

    def entry(self, name: str) -> CatalogEntry:
        """Return the entry called ``name``.

        Args:
            name: Entry name.

        Returns:
            The entry.

        Raises:
            KeyError: No entry has that name.

        """
        for candidate in self.entries:
            if candidate.name == name:
                return candidate
        raise KeyError(name)


# --------------------------------------------------------------------------- building


def _names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


def _items(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


def _env(items: Any) -> tuple[EnvVarSpec, ...] | None:
    if items is None:
        return None
    return tuple(
        [
            EnvVarSpec(item["name"], item["value"], _items(item.get("whenGpusPerNode")))
            for item in items
        ]
    )


def _claim_templates(items: Any) -> tuple[ClaimTemplate, ...] | None:
    if items is None:
        return None
    return tuple(
        [
            ClaimTemplate(
                item["claim"],
                item["suffix"],
                item["request"],
                item["deviceClassName"],
                item["count"],
            )
            for item in items
        ]
    )


def _build_entry(raw: Mapping[str, Any]) -> CatalogEntry:
    get = raw.get
    when = get("when")
    resources = get("resources")
    return CatalogEntry(
        raw["name"],
        raw["source"],
        get("inferred", False),
        WhenSpec()
        if not when
        else WhenSpec(
            _names(when.get("platform")),
            _names(when.get("gpuArchitecture")),
            _names(when.get("frameworks")),  # type: ignore[arg-type]
            _names(when.get("instanceTypes")),
            _names(when.get("gkeAccelerator")),
            when.get("defaultShape", False),
        ),
        _env(get("env")),
        _env(get("forwardEnv")),
        _items(get("mpiArgs")),
        None
        if resources is None
        else ResourcesSpec(resources.get("limits") or {}, resources.get("requests") or {}),
        get("nicResourceName"),
        _items(get("volumes")),
        _items(get("volumeMounts")),
        get("securityContext"),
        _items(get("tolerations")),
        get("podAnnotations"),
        get("topologyKey"),
        _items(get("preCommand")),
        get("gpusPerNode"),
        get("nicsPerNode"),
        _env(get("trainerEnv")),
        bool(get("computeDomain", False)),
        _claim_templates(get("claimTemplates")),
    )


def build_catalog(data: Mapping[str, Any]) -> Catalog:
    """The catalog of a document the file schema accepts (not checked again here).

    Args:
        data: A parsed catalog document that
            :func:`~krm_fn.platforms.catalog_file.validate_catalog_data` accepts.

    Returns:
        The immutable catalog.

    """
    return Catalog(data["version"], tuple([_build_entry(raw) for raw in data["entries"]]))
