"""The platform override catalog: typed model, loader, and resolver.

One job: read ``krm_fn/data/platforms.yaml`` into validated pydantic models and, for one
:class:`PlatformContext` (platform × GPU architecture × framework × node shape), merge
every matching entry into one :class:`ResolvedOverlay` that the render applies.

Invariants:
    * A loaded :class:`Catalog` is immutable and fully validated: unknown fields,
      unknown platform/architecture/framework names, bad env names, unknown template
      placeholders and unpaired volumes are refused with a :class:`CatalogError` whose
      message names the entry and the field.
    * :func:`resolve` is pure: the same catalog and context always give an equal
      overlay, and every mapping/list in the overlay is a fresh copy (mutating it never
      changes the catalog).
    * Merge semantics (entries in file order, later entries win):
      ``env``/``forwardEnv`` merge by name (a later value replaces an earlier one in
      place; order = first appearance); ``mpiArgs`` concatenate in entry order; maps
      (``resources.limits``/``requests``, ``podAnnotations``) merge key by key;
      ``securityContext`` deep-merges maps while its lists replace; every other list
      (``tolerations``, ``preCommand``, the ``volumes`` + ``volumeMounts`` pair) is
      replaced by the last entry that sets it; scalars (``topologyKey``,
      ``nicResourceName``) are replaced.
    * Framework handling: for ``torch``/``exec`` the ``forwardEnv`` of each entry is
      merged into ``env`` (at that entry's position) and ``mpi_args``/``forward_env``
      are empty; for ``mpi`` they stay separate so the render can emit ``-x NAME=value``.
    * Templates ``{gpusPerNode}`` and ``{nicsPerNode}`` are substituted in env values,
      mpiArgs, preCommand, podAnnotations and resources. A resources value that is
      exactly ``"{nicsPerNode|int}"`` (or ``gpusPerNode``) renders as an integer; a
      templated resources value that renders to 0 is dropped (no zero-count request).
      ``${VAR}`` shell syntax is never treated as a template.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from krm_fn.platforms.detect import PLATFORMS, node_gke_accelerators, node_instance_types
from krm_fn.platforms.gpu import GPU_ARCHITECTURES, UNKNOWN_ARCH, gpu_defaults, parse_gpu_product

__all__ = [
    "DEFAULT_CATALOG_RESOURCE",
    "FRAMEWORKS",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "EnvVar",
    "EnvVarSpec",
    "NodeCounts",
    "PlatformContext",
    "ResolvedOverlay",
    "ResourcesSpec",
    "WhenSpec",
    "default_node_counts",
    "load_catalog",
    "make_context",
    "matching_entries",
    "parse_catalog",
    "resolve",
]

DEFAULT_CATALOG_RESOURCE = "data/platforms.yaml"
"""Location of the bundled catalog inside the ``krm_fn`` package."""

FRAMEWORKS: tuple[str, ...] = ("exec", "mpi", "torch")
"""WorkloadRun framework kinds an entry can be restricted to, sorted."""

Framework = Literal["mpi", "torch", "exec"]

TEMPLATE_VARIABLES: tuple[str, ...] = ("gpusPerNode", "nicsPerNode")
_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z][A-Za-z0-9_]*)(\|[A-Za-z]+)?\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENTRY_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_CONTAINER_SECURITY_CONTEXT_FIELDS = frozenset(
    {
        "allowPrivilegeEscalation",
        "appArmorProfile",
        "capabilities",
        "privileged",
        "procMount",
        "readOnlyRootFilesystem",
        "runAsGroup",
        "runAsNonRoot",
        "runAsUser",
        "seLinuxOptions",
        "seccompProfile",
        "windowsOptions",
    }
)
_TOLERATION_OPERATORS = frozenset({"Equal", "Exists"})
_TOLERATION_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})


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


# --------------------------------------------------------------------------- templates


def _check_templates(value: str, *, allow_int: bool = False) -> None:
    """Raise ValueError for unknown placeholders or a misplaced ``|int`` filter."""
    for match in _PLACEHOLDER.finditer(value):
        variable, flt = match.group(1), match.group(2)
        if variable not in TEMPLATE_VARIABLES:
            raise ValueError(
                f"unknown template placeholder {match.group(0)!r} in {value!r}: "
                f"allowed are {', '.join('{' + v + '}' for v in TEMPLATE_VARIABLES)}"
            )
        if flt is None:
            continue
        if flt != "|int":
            raise ValueError(f"unknown template filter {flt!r} in {value!r}: only '|int' exists")
        if not allow_int or match.group(0) != value:
            raise ValueError(
                f"{value!r}: the '|int' filter is only allowed as a whole resources value, "
                "e.g. '{nicsPerNode|int}'"
            )


def _render(value: str, variables: Mapping[str, int]) -> str:
    return _PLACEHOLDER.sub(lambda m: str(variables[m.group(1)]), value)


def _render_resource(value: str | int, variables: Mapping[str, int]) -> str | int | None:
    """Render one resources value; ``None`` means "drop it" (templated and zero)."""
    if isinstance(value, int):
        return value
    match = _PLACEHOLDER.fullmatch(value)
    if match is not None and match.group(2) == "|int":
        number = variables[match.group(1)]
        return number if number != 0 else None
    rendered = _render(value, variables)
    if rendered != value and rendered.strip() == "0":
        return None
    return rendered


# --------------------------------------------------------------------------- model

_MODEL_CONFIG = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _as_tuple(value: object) -> object:
    """Accept a single string where a list of strings is expected."""
    return (value,) if isinstance(value, str) else value


class EnvVarSpec(BaseModel):
    """One ``{name, value}`` environment variable in the catalog."""

    model_config = _MODEL_CONFIG

    name: StrictStr
    value: StrictStr

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        if not _ENV_NAME.match(name):
            raise ValueError(f"invalid environment variable name {name!r}")
        return name

    @field_validator("value")
    @classmethod
    def _valid_value(cls, value: str) -> str:
        _check_templates(value)
        return value


class WhenSpec(BaseModel):
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

    model_config = _MODEL_CONFIG

    platform: tuple[StrictStr, ...] | None = None
    gpu_architecture: tuple[StrictStr, ...] | None = Field(default=None, alias="gpuArchitecture")
    frameworks: tuple[Framework, ...] | None = None
    instance_types: tuple[StrictStr, ...] | None = Field(default=None, alias="instanceTypes")
    gke_accelerator: tuple[StrictStr, ...] | None = Field(default=None, alias="gkeAccelerator")
    default_shape: StrictBool = Field(default=False, alias="defaultShape")

    @field_validator(
        "platform", "gpu_architecture", "frameworks", "instance_types", "gke_accelerator",
        mode="before",
    )  # fmt: skip
    @classmethod
    def _normalise_lists(cls, value: object) -> object:
        return _as_tuple(value)

    @field_validator("platform")
    @classmethod
    def _known_platforms(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for name in value or ():
            if name not in PLATFORMS:
                raise ValueError(
                    f"unknown platform {name!r}: must be one of {', '.join(PLATFORMS)}"
                )
        return value

    @field_validator("gpu_architecture")
    @classmethod
    def _known_archs(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        allowed = (*GPU_ARCHITECTURES, UNKNOWN_ARCH)
        for name in value or ():
            if name not in allowed:
                raise ValueError(
                    f"unknown GPU architecture {name!r}: must be one of {', '.join(allowed)}"
                )
        return value

    @field_validator(
        "platform", "gpu_architecture", "frameworks", "instance_types", "gke_accelerator"
    )
    @classmethod
    def _non_empty(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and (not value or any(not v for v in value)):
            raise ValueError("must be a non-empty name or a non-empty list of non-empty names")
        return value

    @model_validator(mode="after")
    def _default_shape_needs_shape(self) -> WhenSpec:
        if self.default_shape and self.instance_types is None and self.gke_accelerator is None:
            raise ValueError("defaultShape needs instanceTypes or gkeAccelerator")
        return self


ResourceValue = StrictStr | StrictInt


class ResourcesSpec(BaseModel):
    """Container resource ``limits``/``requests`` added by an entry (values may be templates)."""

    model_config = _MODEL_CONFIG

    limits: dict[StrictStr, ResourceValue] = Field(default_factory=dict)
    requests: dict[StrictStr, ResourceValue] = Field(default_factory=dict)

    @field_validator("limits", "requests")
    @classmethod
    def _valid_values(cls, value: dict[str, str | int]) -> dict[str, str | int]:
        for name, quantity in value.items():
            if not name:
                raise ValueError("empty resource name")
            if isinstance(quantity, int) and quantity < 0:
                raise ValueError(f"{name}: negative quantity {quantity}")
            if isinstance(quantity, str):
                try:
                    _check_templates(quantity, allow_int=True)
                except ValueError as exc:
                    raise ValueError(f"{name}: {exc}") from None
        return value


def _require_keys(items: Iterable[Mapping[str, Any]], keys: Sequence[str], what: str) -> None:
    for index, item in enumerate(items):
        for key in keys:
            if not isinstance(item.get(key), str) or not item[key]:
                raise ValueError(f"item {index} of {what} needs a non-empty string {key!r}")


class CatalogEntry(BaseModel):
    """One ordered catalog entry: a ``when`` condition and the settings it contributes."""

    model_config = _MODEL_CONFIG

    name: StrictStr
    source: StrictStr
    inferred: StrictBool = False
    when: WhenSpec = Field(default_factory=WhenSpec)
    env: tuple[EnvVarSpec, ...] | None = None
    forward_env: tuple[EnvVarSpec, ...] | None = Field(default=None, alias="forwardEnv")
    mpi_args: tuple[StrictStr, ...] | None = Field(default=None, alias="mpiArgs")
    resources: ResourcesSpec | None = None
    nic_resource_name: StrictStr | None = Field(default=None, alias="nicResourceName")
    volumes: tuple[dict[StrictStr, Any], ...] | None = None
    volume_mounts: tuple[dict[StrictStr, Any], ...] | None = Field(
        default=None, alias="volumeMounts"
    )
    security_context: dict[StrictStr, Any] | None = Field(default=None, alias="securityContext")
    tolerations: tuple[dict[StrictStr, Any], ...] | None = None
    pod_annotations: dict[StrictStr, StrictStr] | None = Field(default=None, alias="podAnnotations")
    topology_key: StrictStr | None = Field(default=None, alias="topologyKey")
    pre_command: tuple[StrictStr, ...] | None = Field(default=None, alias="preCommand")
    gpus_per_node: Annotated[StrictInt, Field(ge=1)] | None = Field(
        default=None, alias="gpusPerNode"
    )
    nics_per_node: Annotated[StrictInt, Field(ge=0)] | None = Field(
        default=None, alias="nicsPerNode"
    )

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        if not _ENTRY_NAME.match(name) or len(name) > 63:
            raise ValueError(f"invalid entry name {name!r}: use lower-case letters, digits, '-'")
        return name

    @field_validator("source")
    @classmethod
    def _non_empty_source(cls, source: str) -> str:
        if not source.strip():
            raise ValueError("source must cite where the values come from")
        return source

    @field_validator("env", "forward_env")
    @classmethod
    def _unique_env(cls, value: tuple[EnvVarSpec, ...] | None) -> tuple[EnvVarSpec, ...] | None:
        seen: set[str] = set()
        for var in value or ():
            if var.name in seen:
                raise ValueError(f"{var.name} is set twice")
            seen.add(var.name)
        return value

    @field_validator("mpi_args", "pre_command")
    @classmethod
    def _string_templates(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for item in value or ():
            _check_templates(item)
        return value

    @field_validator("pod_annotations")
    @classmethod
    def _annotation_templates(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for item in (value or {}).values():
            _check_templates(item)
        return value

    @field_validator("topology_key", "nic_resource_name")
    @classmethod
    def _non_empty_scalar(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("volumes")
    @classmethod
    def _valid_volumes(
        cls, value: tuple[dict[str, Any], ...] | None
    ) -> tuple[dict[str, Any], ...] | None:
        _require_keys(value or (), ("name",), "volumes")
        return value

    @field_validator("volume_mounts")
    @classmethod
    def _valid_mounts(
        cls, value: tuple[dict[str, Any], ...] | None
    ) -> tuple[dict[str, Any], ...] | None:
        _require_keys(value or (), ("name", "mountPath"), "volumeMounts")
        return value

    @field_validator("security_context")
    @classmethod
    def _valid_security_context(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        unknown = sorted(set(value or {}) - _CONTAINER_SECURITY_CONTEXT_FIELDS)
        if unknown:
            raise ValueError(f"unknown container securityContext field(s): {', '.join(unknown)}")
        return value

    @field_validator("tolerations")
    @classmethod
    def _valid_tolerations(
        cls, value: tuple[dict[str, Any], ...] | None
    ) -> tuple[dict[str, Any], ...] | None:
        for index, toleration in enumerate(value or ()):
            operator = toleration.get("operator", "Equal")
            effect = toleration.get("effect")
            if operator not in _TOLERATION_OPERATORS:
                raise ValueError(f"item {index}: unknown operator {operator!r}")
            if effect is not None and effect not in _TOLERATION_EFFECTS:
                raise ValueError(f"item {index}: unknown effect {effect!r}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> CatalogEntry:
        if (self.volumes is None) != (self.volume_mounts is None):
            raise ValueError("field 'volumes' and field 'volumeMounts' must be set together")
        names = {v["name"] for v in self.volumes or ()}
        for mount in self.volume_mounts or ():
            if mount["name"] not in names:
                raise ValueError(
                    f"field 'volumeMounts': mount {mount['name']!r} names no volume of this entry"
                )
        settings = (
            "env", "forward_env", "mpi_args", "resources", "nic_resource_name", "volumes",
            "security_context", "tolerations", "pod_annotations", "topology_key",
            "pre_command", "gpus_per_node", "nics_per_node",
        )  # fmt: skip
        if all(getattr(self, s) is None for s in settings):
            raise ValueError("entry sets nothing (no env, mpiArgs, resources, ...)")
        return self


class Catalog(BaseModel):
    """The whole catalog: a format version and the ordered entries."""

    model_config = _MODEL_CONFIG

    version: Literal[1]
    entries: tuple[CatalogEntry, ...]

    @model_validator(mode="after")
    def _unique_names(self) -> Catalog:
        first: dict[str, int] = {}
        for index, entry in enumerate(self.entries):
            if entry.name in first:
                raise ValueError(
                    f"entry {entry.name!r} (#{index}): field 'name': duplicate entry name "
                    f"(first used by entry #{first[entry.name]})"
                )
            first[entry.name] = index
        return self

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


# --------------------------------------------------------------------------- loading


def _format_location(loc: Sequence[int | str]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _problems(error: ValidationError, data: object) -> list[str]:
    entries = data.get("entries") if isinstance(data, Mapping) else None
    problems = []
    for detail in error.errors():
        loc = list(detail["loc"])
        message = str(detail["ctx"]["error"]) if detail["type"] == "value_error" else detail["msg"]
        if detail["type"] == "string_type":
            message += f" (got {detail['input']!r}; quote numbers and booleans meant as text)"
        elif detail["type"] in {"bool_type", "int_type"}:
            message += f" (got {detail['input']!r})"
        if len(loc) >= 2 and loc[0] == "entries" and isinstance(loc[1], int):
            index = loc[1]
            raw = entries[index] if isinstance(entries, list) and index < len(entries) else None
            name = raw.get("name") if isinstance(raw, Mapping) else None
            where = f"entry {name!r} (#{index})" if name else f"entry #{index}"
            field = _format_location(loc[2:])
            problems.append(
                f"{where}: field {field!r}: {message}" if field else f"{where}: {message}"
            )
        elif loc:
            problems.append(f"field {_format_location(loc)!r}: {message}")
        else:
            problems.append(message)
    return problems


def parse_catalog(text: str, origin: str = "<string>") -> Catalog:
    """Parse and validate catalog YAML text.

    Args:
        text: The YAML document.
        origin: Name used in error messages (a path or resource name).

    Returns:
        The validated catalog.

    Raises:
        CatalogError: The YAML is malformed or does not match the model.

    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise CatalogError(origin, [f"not valid YAML: {exc}"]) from exc
    if not isinstance(data, Mapping):
        raise CatalogError(origin, ["the document must be a mapping with 'version' and 'entries'"])
    try:
        return Catalog.model_validate(data)
    except ValidationError as exc:
        raise CatalogError(origin, _problems(exc, data)) from exc


@lru_cache(maxsize=1)
def _load_default() -> Catalog:
    from importlib import resources

    resource = resources.files("krm_fn").joinpath(DEFAULT_CATALOG_RESOURCE)
    return parse_catalog(resource.read_text(encoding="utf-8"), f"krm_fn/{DEFAULT_CATALOG_RESOURCE}")


def load_catalog(path: Path | None = None) -> Catalog:
    """Load and validate a catalog.

    Args:
        path: A catalog file; ``None`` loads the bundled ``krm_fn/data/platforms.yaml``
            (parsed once per process, then cached).

    Returns:
        The validated catalog.

    Raises:
        CatalogError: The file is unreadable or invalid.

    """
    if path is None:
        return _load_default()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(str(path), [f"cannot read: {exc}"]) from exc
    return parse_catalog(text, str(path))


# --------------------------------------------------------------------------- resolving


@dataclass(frozen=True)
class EnvVar:
    """A resolved environment variable."""

    name: str
    value: str


@dataclass(frozen=True)
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

    """

    platform: str
    gpu_architecture: str
    framework: str
    instance_types: frozenset[str]
    gke_accelerators: frozenset[str]
    gpus_per_node: int
    nics_per_node: int

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


@dataclass(frozen=True)
class ResolvedOverlay:
    """The merged settings of every catalog entry that matched a context.

    See the module docstring for the merge rules. Mappings and lists are fresh copies.
    """

    applied: tuple[str, ...]
    env: tuple[EnvVar, ...]
    forward_env: tuple[EnvVar, ...]
    mpi_args: tuple[str, ...]
    resources: Mapping[str, Mapping[str, str | int]]
    volumes: tuple[Mapping[str, Any], ...]
    volume_mounts: tuple[Mapping[str, Any], ...]
    security_context: Mapping[str, Any]
    tolerations: tuple[Mapping[str, Any], ...]
    pod_annotations: Mapping[str, str]
    topology_key: str | None
    pre_command: tuple[str, ...]
    nic_resource_name: str | None


def _shape_matches(allowed: tuple[str, ...] | None, actual: frozenset[str], default: bool) -> bool:
    if allowed is None:
        return True
    if not actual:
        return default
    return actual <= set(allowed)


def _when_matches(
    when: WhenSpec,
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
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _merge_env(
    target: dict[str, str], items: Iterable[EnvVarSpec], variables: Mapping[str, int]
) -> None:
    for var in items:
        target[var.name] = _render(var.value, variables)


def resolve(catalog: Catalog, ctx: PlatformContext) -> ResolvedOverlay:
    """Merge every catalog entry matching ``ctx`` into one overlay.

    Args:
        catalog: The catalog (see :func:`load_catalog`).
        ctx: Platform, GPU architecture, framework, node shape and node counts.

    Returns:
        The overlay; ``applied`` lists the matched entry names in order.

    """
    variables = {"gpusPerNode": ctx.gpus_per_node, "nicsPerNode": ctx.nics_per_node}
    mpi = ctx.framework == "mpi"
    applied: list[str] = []
    env: dict[str, str] = {}
    forward_env: dict[str, str] = {}
    mpi_args: list[str] = []
    resources: dict[str, dict[str, str | int]] = {}
    volumes: tuple[dict[str, Any], ...] = ()
    volume_mounts: tuple[dict[str, Any], ...] = ()
    security_context: dict[str, Any] = {}
    tolerations: tuple[dict[str, Any], ...] = ()
    pod_annotations: dict[str, str] = {}
    topology_key: str | None = None
    pre_command: tuple[str, ...] = ()
    nic_resource_name: str | None = None

    for entry in matching_entries(catalog, ctx):
        applied.append(entry.name)
        _merge_env(env, entry.env or (), variables)
        _merge_env(forward_env if mpi else env, entry.forward_env or (), variables)
        if mpi:
            mpi_args.extend(_render(arg, variables) for arg in entry.mpi_args or ())
        if entry.resources is not None:
            for section in ("limits", "requests"):
                for name, raw in getattr(entry.resources, section).items():
                    rendered = _render_resource(raw, variables)
                    target = resources.setdefault(section, {})
                    if rendered is None:
                        target.pop(name, None)
                    else:
                        target[name] = rendered
        if entry.volumes is not None and entry.volume_mounts is not None:
            volumes = copy.deepcopy(entry.volumes)
            volume_mounts = copy.deepcopy(entry.volume_mounts)
        if entry.security_context is not None:
            _deep_merge(security_context, entry.security_context)
        if entry.tolerations is not None:
            tolerations = copy.deepcopy(entry.tolerations)
        for key, value in (entry.pod_annotations or {}).items():
            pod_annotations[key] = _render(value, variables)
        if entry.topology_key is not None:
            topology_key = entry.topology_key
        if entry.pre_command is not None:
            pre_command = tuple(_render(line, variables) for line in entry.pre_command)
        if entry.nic_resource_name is not None:
            nic_resource_name = entry.nic_resource_name

    return ResolvedOverlay(
        applied=tuple(applied),
        env=tuple(EnvVar(k, v) for k, v in env.items()),
        forward_env=tuple(EnvVar(k, v) for k, v in forward_env.items()),
        mpi_args=tuple(mpi_args),
        resources={section: values for section, values in resources.items() if values},
        volumes=volumes,
        volume_mounts=volume_mounts,
        security_context=security_context,
        tolerations=tolerations,
        pod_annotations=pod_annotations,
        topology_key=topology_key,
        pre_command=pre_command,
        nic_resource_name=nic_resource_name,
    )


# --------------------------------------------------------------------------- contexts


@dataclass(frozen=True)
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
    :func:`~krm_fn.platforms.gpu.gpu_defaults` for (architecture, platform) applies.

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
    base = gpu_defaults(gpu_architecture, platform)
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

    Returns:
        The context, ready for :func:`resolve`.

    """
    node_list = list(nodes)
    instance_types = node_instance_types(node_list)
    gke_accelerators = node_gke_accelerators(node_list)
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
    )
