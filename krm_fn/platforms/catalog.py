"""The platform table: its frozen pydantic models (file format and value alike), loading, merging.

The file: ``version: 1``; ``gpus`` (GPU models, defaults) and ``gpuFallback``; ``entries``
(NVCRE override entries of every platform); ``platforms``, each with its detection rules,
topology keys, NIC resources, per-GPU defaults and ``entries`` (docs/platforms.md).

Invariants:
    * camelCase keys, unknown keys refused (with "did you mean"), strict types, frozen.
    * Every problem of a file at once, one line each naming the platform, GPU or entry (by
      name and number), the field path, the bad value and what is allowed.
    * A loaded catalog's ``entries`` are every override entry in evaluation order: each
      file's global entries, then its platforms' (``when.platform`` filled in); the bundled
      file, then the site files (``platformCatalog``) in order. Later entries win.
    * A site file adds platforms and entries with new names, never GPU models; its platforms
      detect after the bundled ones, whose default platform (no rules) stays the fallback.
    * Read once per process and content (``functools.lru_cache``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from krm_fn.api.fields import fields_of, model_at
from krm_fn.api.models import DNS1123_LABEL_RE
from krm_fn.api.validate import error_message, field_path
from krm_fn.platforms.templates import is_int_template, template_problem

BUNDLED_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "platforms.yaml")
"""The bundled table (wheel and editable installs alike)."""

Framework = Literal["mpi", "torch", "exec"]
FRAMEWORKS: tuple[str, ...] = tuple(sorted(get_args(Framework)))
UNKNOWN_ARCH = "unknown"
_DNS_RULE = "at most 63 lower-case letters, digits or '-', not starting or ending with '-'"


class CatalogError(ValueError):
    """A catalog file is unreadable or invalid; ``problems`` has one line per problem."""

    def __init__(self, origin: str, problems: Sequence[str]) -> None:
        """Build the error from where the catalog came from and its problems."""
        self.origin, self.problems = origin, tuple(problems)
        super().__init__(f"invalid platform catalog {origin}:\n  " + "\n  ".join(self.problems))


class GpuDefaults(NamedTuple):
    """Per-node defaults of one GPU model on one platform (0 NICs means none)."""

    gpus_per_node: int
    nics_per_node: int
    mnnvl: bool


# --------------------------------------------------------------------------- field rules


def _rule(ok: Callable[[str], bool], problem: Callable[[str], str | None]) -> AfterValidator:
    """A string rule: ``problem(value)`` is the message when ``ok(value)`` is false."""

    def check(value: str) -> str:
        if not ok(value):
            raise ValueError(problem(value))
        return value

    return AfterValidator(check)


def _is_label(name: str) -> bool:
    return len(name) <= 63 and DNS1123_LABEL_RE.match(name) is not None


def _not_blank(what: str) -> AfterValidator:
    return _rule(lambda v: bool(v.strip()), lambda v: what)


def _one_or_many(value: Any) -> Any:
    """``platform: aws`` is short for ``platform: [aws]``."""
    return [value] if isinstance(value, str) else value


def _names_of(what: str, known: str | None = None) -> AfterValidator:
    """A list of non-empty names, each one of the context's ``known`` names (when given)."""

    def check(names: list[str], info: ValidationInfo) -> list[str]:
        allowed = (info.context or {}).get(known, ()) if known else None
        unknown = [n for n in names if allowed is not None and n not in allowed]
        if unknown:
            raise ValueError(
                f"unknown {what} {', '.join(map(repr, unknown))}: must be one of "
                f"{', '.join(allowed or ())}"
            )
        if not names or not all(names):
            raise ValueError("must be a non-empty name or a non-empty list of non-empty names")
        return names

    return AfterValidator(check)


def _known_arch(name: str, info: ValidationInfo) -> str:
    allowed = (info.context or {}).get("gpus", ())
    if name not in allowed:
        raise ValueError(f"unknown GPU architecture {name!r}: must be one of {', '.join(allowed)}")
    return name


def _quantity(value: Any) -> Any:
    """A resources value: an integer >= 0, a string (templates allowed), or null (delete)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(
            f"a quantity is a string, an integer or null (delete the name); got "
            f"{type(value).__name__} {value!r}"
        )
    if isinstance(value, int) and value < 0:
        raise ValueError(f"negative quantity {value}: a quantity is >= 0")
    if isinstance(value, str):
        if not value:
            raise ValueError("empty quantity: use a quantity such as '1' or '2Gi'")
        problem = template_problem(value, allow_int=True)
        if problem:
            raise ValueError(problem)
    return value


def _claim_count(value: Any) -> Any:
    """An integer >= 1, or exactly ``"{gpusPerNode|int}"``/``"{nicsPerNode|int}"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ValueError(f"count {value} is below 1: use an integer >= 1")
        return value
    if isinstance(value, str):
        problem = template_problem(value, allow_int=True)
        if problem:
            raise ValueError(problem)
        if is_int_template(value):
            return value
    raise ValueError(
        f"count {value!r}: use an integer >= 1, '{{gpusPerNode|int}}' or '{{nicsPerNode|int}}'"
    )


Name = Annotated[str, _rule(_is_label, lambda v: f"invalid name {v!r}: use {_DNS_RULE}")]
EntryName = Annotated[str, _rule(_is_label, lambda v: f"invalid entry name {v!r}: use {_DNS_RULE}")]
DnsLabel = Annotated[str, _rule(_is_label, lambda v: f"{v!r} is not a DNS label: use {_DNS_RULE}")]
DnsSubdomain = Annotated[
    str,
    _rule(
        lambda v: len(v) <= 253 and all(_is_label(x) for x in v.split(".")),
        lambda v: f"{v!r} is not a DNS subdomain: use DNS labels ({_DNS_RULE}) joined by '.'",
    ),
]
EnvName = Annotated[
    str,
    _rule(
        lambda v: v.isascii() and v.isidentifier(),
        lambda v: (
            f"invalid environment variable name {v!r}: use letters, digits and '_', "
            "not starting with a digit"
        ),
    ),
]
Template = Annotated[str, _rule(lambda v: template_problem(v) is None, template_problem)]
NonEmpty = Annotated[str, Field(min_length=1)]
Quantity = Annotated[int | str | None, PlainValidator(_quantity)]
ClaimCount = Annotated[int | str, PlainValidator(_claim_count)]
Count = Annotated[int, Field(ge=0)]
PositiveCount = Annotated[int, Field(ge=1)]
ArchKey = Annotated[str, AfterValidator(_known_arch)]
PlatformNames = Annotated[
    list[str], BeforeValidator(_one_or_many), _names_of("platform", "platforms")
]
ArchNames = Annotated[
    list[str], BeforeValidator(_one_or_many), _names_of("GPU architecture", "archs")
]
FrameworkNames = Annotated[list[Framework], BeforeValidator(_one_or_many), _names_of("framework")]
ShapeNames = Annotated[list[str], BeforeValidator(_one_or_many), _names_of("name")]


# --------------------------------------------------------------------------- override entries


class _Model(BaseModel):
    """Base: camelCase keys, unknown keys refused, strict types, frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel, extra="forbid", strict=True, frozen=True, defer_build=True
    )


class _Object(_Model):
    """Base of the Kubernetes objects an entry passes through: unknown keys are kept."""

    model_config = ConfigDict(extra="allow")

    def k8s(self) -> dict[str, Any]:
        """The object as Kubernetes writes it (camelCase keys, unset fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class When(_Model):
    """When an entry applies: every condition that is set must hold (a name is a list of one).

    ``instanceTypes``/``gkeAccelerator`` match when every eligible node's label value is
    listed; ``defaultShape`` also matches nodes without the label (offline previews).
    """

    platform: PlatformNames | None = None
    gpu_architecture: ArchNames | None = None
    frameworks: FrameworkNames | None = None
    instance_types: ShapeNames | None = None
    gke_accelerator: ShapeNames | None = None
    default_shape: bool = False

    @model_validator(mode="after")
    def _default_shape_names_a_shape(self) -> When:
        if self.default_shape and self.instance_types is None and self.gke_accelerator is None:
            raise ValueError("defaultShape needs instanceTypes or gkeAccelerator")
        return self


class EnvVarSpec(_Model):
    """One ``{name, value}`` variable; ``whenGpusPerNode`` limits it to those GPU counts."""

    name: EnvName
    value: Template
    when_gpus_per_node: list[PositiveCount] | None = None


def _set_once(items: list[EnvVarSpec]) -> list[EnvVarSpec]:
    """A name is set once per list, unless each later setting is limited by whenGpusPerNode."""
    seen: set[str] = set()
    twice: list[str] = []
    for item in items:
        if item.name in seen and item.when_gpus_per_node is None and item.name not in twice:
            twice.append(item.name)
        seen.add(item.name)
    if twice:
        raise ValueError(
            f"{', '.join(twice)} {'is' if len(twice) == 1 else 'are'} set twice: set a name "
            "once, or limit each setting with whenGpusPerNode"
        )
    return items


EnvList = Annotated[list[EnvVarSpec], AfterValidator(_set_once)]


class Resources(_Model):
    """Container ``limits``/``requests``: a value may be a template; ``null`` deletes the name."""

    limits: dict[NonEmpty, Quantity] = Field(default_factory=dict)
    requests: dict[NonEmpty, Quantity] = Field(default_factory=dict)


class Volume(_Object):
    """A pod volume (core/v1 Volume): any volume source, and a name the mounts refer to."""

    name: NonEmpty


class VolumeMount(_Object):
    """A container volume mount (core/v1 VolumeMount)."""

    name: NonEmpty
    mount_path: NonEmpty


class Capabilities(_Model):
    """core/v1 Capabilities."""

    add: list[str] | None = None
    drop: list[str] | None = None


class SecurityContext(_Object):
    """A container ``securityContext`` (core/v1 SecurityContext; the pod's has other fields)."""

    model_config = ConfigDict(extra="forbid")

    allow_privilege_escalation: bool | None = None
    app_armor_profile: dict[str, Any] | None = None
    capabilities: Capabilities | None = None
    privileged: bool | None = None
    proc_mount: str | None = None
    read_only_root_filesystem: bool | None = None
    run_as_group: Count | None = None
    run_as_non_root: bool | None = None
    run_as_user: Count | None = None
    se_linux_options: dict[str, Any] | None = None
    seccomp_profile: dict[str, Any] | None = None
    windows_options: dict[str, Any] | None = None


class Toleration(_Object):
    """A pod toleration (core/v1 Toleration)."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = None
    operator: Literal["Equal", "Exists"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = None


class ClaimTemplate(_Model):
    """A DRA ResourceClaimTemplate ``<run>-<suffix>`` and the pod claim ``claim`` using it.

    In the table ``count`` may be an ``|int`` template; once resolved
    (:func:`krm_fn.platforms.overlay.resolve`) it is an integer > 0.
    """

    claim: DnsLabel
    suffix: DnsLabel
    request: DnsLabel
    device_class: DnsSubdomain = Field(alias="deviceClassName")
    count: ClaimCount


class CatalogEntry(_Model):
    """One override entry: a cited source, a ``when`` condition and the settings it adds.

    ``None`` means "not set" for every setting (an explicit ``[]`` is a value).
    """

    name: EntryName
    source: Annotated[str, _not_blank("source must cite where the values come from")]
    inferred: bool = False
    when: When = Field(default_factory=When)
    env: EnvList | None = None
    forward_env: EnvList | None = None
    mpi_args: list[Template] | None = None
    resources: Resources | None = None
    nic_resource_name: Annotated[str, _not_blank("must not be empty")] | None = None
    volumes: list[Volume] | None = None
    volume_mounts: list[VolumeMount] | None = None
    security_context: SecurityContext | None = None
    tolerations: list[Toleration] | None = None
    pod_annotations: dict[str, Template] | None = None
    topology_key: Annotated[str, _not_blank("must not be empty")] | None = None
    pre_command: list[Template] | None = None
    gpus_per_node: PositiveCount | None = None
    nics_per_node: Count | None = None
    trainer_env: EnvList | None = None
    compute_domain: bool = False
    claim_templates: list[ClaimTemplate] | None = None

    @field_validator("compute_domain", mode="before")
    @classmethod
    def _compute_domain_is_true(cls, value: Any) -> Any:
        if value is False:
            raise ValueError("false sets nothing: set it to true or leave it out")
        return value

    @model_validator(mode="after")
    def _entry_as_a_whole(self) -> CatalogEntry:
        """Cross-field rules, checked once every field of the entry is valid."""
        problems = []
        if (self.volumes is None) != (self.volume_mounts is None):
            problems.append("field 'volumes' and field 'volumeMounts' must be set together")
        names = {volume.name for volume in self.volumes or ()}
        unmatched = [m.name for m in self.volume_mounts or () if m.name not in names]
        if unmatched and self.volumes is not None:
            problems.append(
                f"field 'volumeMounts': mount(s) {', '.join(map(repr, unmatched))} name no "
                f"volume of this entry (its volumes: {', '.join(sorted(names)) or 'none'})"
            )
        settings = list(CatalogEntry.model_fields)[4:]  # after name, source, inferred, when
        if all(getattr(self, key) in (None, False) for key in settings):
            problems.append(
                "entry sets nothing: give it at least one of "
                + ", ".join(to_camel(key) for key in settings)
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self


# --------------------------------------------------------------------------- GPUs, platforms


class GpuCounts(_Model):
    """A platform's own defaults for one GPU model: an explicit 0 is a value, unset keeps."""

    gpus_per_node: PositiveCount | None = None
    nics_per_node: Count | None = None


class Counts(_Model):
    """GPUs and RDMA NICs (NVCRE ``mlnxPerNode``) per node."""

    gpus_per_node: PositiveCount
    nics_per_node: Count


class Gpu(Counts):
    """A GPU model (NVCRE's gpu-defaults table) and the GFD product an offline preview uses."""

    name: Name
    product: NonEmpty
    mnnvl: bool = False


class DetectRule(_Model):
    """Nodes of a platform: every condition that is set holds.

    ``providerID`` is a prefix of ``spec.providerID``; ``""`` means "no providerID".
    ``label``/``allocatable`` name a label / an allocatable resource the node has.
    """

    provider_id: str | None = Field(default=None, alias="providerID")
    label: NonEmpty | None = None
    allocatable: NonEmpty | None = None

    @model_validator(mode="after")
    def _says_something(self) -> DetectRule:
        if self.provider_id is None and self.label is None and self.allocatable is None:
            raise ValueError("a detection rule needs providerID, label or allocatable")
        return self


class Platform(_Model):
    """Everything about one platform: detection, topology, NICs, GPU defaults, overrides."""

    name: Name
    source: Annotated[str, _not_blank("source must cite where the values come from")]
    detect: list[DetectRule] = Field(default_factory=list)
    hostname_hint: NonEmpty | None = None
    topology_keys: list[NonEmpty] = Field(default_factory=list)
    default_topology_key: NonEmpty | None = None
    nic_resources: list[NonEmpty] = Field(default_factory=list)
    nic_detection: ArchNames | None = None
    gpu_defaults: dict[ArchKey, GpuCounts] = Field(default_factory=dict)
    entries: list[CatalogEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Platform:
        problems = []
        if self.default_topology_key and self.default_topology_key not in self.topology_keys:
            problems.append("defaultTopologyKey must be one of topologyKeys")
        if self.nic_detection is not None and not self.nic_resources:
            problems.append("nicDetection needs nicResources (the names to detect)")
        own = [e.name for e in self.entries if e.when.platform is not None]
        if own:
            problems.append(
                f"entries {', '.join(map(repr, own))} set when.platform: an entry of a "
                "platform applies to that platform; leave when.platform out"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def detection_labels(self) -> list[str]:
        """The labels detection reads on this platform's nodes."""
        return [r.label for r in self.detect if r.label]


class Catalog(_Model):
    """The whole table; once loaded, ``entries`` is every override entry in evaluation order."""

    version: Literal[1]
    gpus: list[Gpu] = Field(default_factory=list)
    gpu_fallback: Counts | None = None
    entries: list[CatalogEntry] = Field(default_factory=list)
    platforms: list[Platform] = Field(default_factory=list)

    @field_validator("version", mode="before")
    @classmethod
    def _version_is_the_integer_one(cls, value: Any) -> Any:
        if isinstance(value, bool):  # True == 1, but it is not the version number
            raise ValueError(f"value {value!r} is not allowed; expected 1")
        return value

    @property
    def names(self) -> tuple[str, ...]:
        """Override entry names in evaluation order."""
        return tuple(e.name for e in self.entries)

    def platform(self, name: str) -> Platform | None:
        """The platform called ``name``."""
        return next((p for p in self.platforms if p.name == name), None)

    def gpu(self, name: str) -> Gpu | None:
        """The GPU model called ``name``."""
        return next((g for g in self.gpus if g.name == name), None)

    @property
    def platform_names(self) -> tuple[str, ...]:
        """Every platform name, sorted (the valid ``platform`` option values)."""
        return tuple(sorted(p.name for p in self.platforms))

    @property
    def gpu_names(self) -> tuple[str, ...]:
        """Every GPU model of the table, sorted (the valid ``gpuArch`` option values)."""
        return tuple(sorted(g.name for g in self.gpus))

    @property
    def default_platform(self) -> Platform:
        """The platform of nodes no rule detects: the one without detection rules."""
        return next(p for p in self.platforms if not p.detect)

    def gpu_defaults(self, arch: str, platform: str = "") -> GpuDefaults:
        """GPUs, NICs and MNNVL for a GPU model on a platform (the fallback for other models)."""
        gpu = self.gpu(arch)
        base = gpu or self.gpu_fallback
        assert base is not None, "the bundled table has a gpuFallback"
        gpus, nics = base.gpus_per_node, base.nics_per_node
        own = self.platform(platform)
        extra = own.gpu_defaults.get(arch) if own else None
        if extra is not None:
            gpus = gpus if extra.gpus_per_node is None else extra.gpus_per_node
            nics = nics if extra.nics_per_node is None else extra.nics_per_node
        return GpuDefaults(gpus, nics, bool(gpu and gpu.mnnvl))

    def topology_keys(self) -> list[str]:
        """Every label the table may partition by, sorted."""
        keys = {k for p in self.platforms for k in p.topology_keys}
        return sorted(keys | {e.topology_key for e in self.entries if e.topology_key})

    def kept_labels(self) -> set[str]:
        """Labels the render reads because of the table: detection and topology labels."""
        return {k for p in self.platforms for k in (*p.detection_labels(), *p.topology_keys)}


# --------------------------------------------------------------------------- problems

_NOUNS = {"gpus": "gpu", "entries": "entry", "platforms": "platform"}


def _items(data: Any, key: str) -> list[Any]:
    items = data.get(key) if isinstance(data, dict) else None
    return items if isinstance(items, list) else []


def _name(item: Any) -> str | None:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) and name else None


def _located(data: Any) -> Iterator[tuple[str, tuple[Any, ...], Any]]:
    """(kind, location, item) of every named item, entries of platforms included."""
    for kind in _NOUNS:
        yield from ((kind, (kind, i), x) for i, x in enumerate(_items(data, kind)))
    for j, platform in enumerate(_items(data, "platforms")):
        for i, x in enumerate(_items(platform, "entries")):
            yield "entries", ("platforms", j, "entries", i), x


def _duplicates(data: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(location, message) of every name a document uses twice (entries: one namespace)."""
    first: dict[tuple[str, str], str] = {}
    out = []
    for kind, loc, item in _located(data):
        name = _name(item)
        if name is not None and (kind, name) in first:
            problem = f"duplicate {_NOUNS[kind]} name {name!r} (first used by {first[kind, name]})"
            out.append(((*loc, "name"), problem))
        elif name is not None:
            first[kind, name] = f"{_NOUNS[kind]} #{loc[-1]}"
    return out


def _unknown_field(loc: tuple[int | str, ...]) -> str:
    import difflib  # only unknown-field errors need it

    leaf = str(loc[-1]) if loc else ""
    model = model_at(Catalog, loc)
    assert model is not None, loc  # only a model refuses unknown fields
    known = [f.key for f in fields_of(model)]
    close = difflib.get_close_matches(leaf, known, n=1, cutoff=0.6)
    if close:
        return f"unknown field {leaf!r}: did you mean {close[0]!r}?"
    return f"unknown field {leaf!r}: allowed are {', '.join(known)}"


def _problem(data: Any, loc: tuple[Any, ...], message: str) -> tuple[list[tuple[int, int]], str]:
    """(document order, text) of one problem: the named items it is in, its field, the text."""
    if not loc:
        return [], "the document must be a mapping with 'version' and 'entries' or 'platforms'"
    if loc[-1] == "[key]":  # a mapping's key, not its value, is wrong
        message, loc = f"key {loc[-2]!r}: {message}", loc[:-2]
    where, order, node = [], [], data
    while len(loc) >= 2 and loc[0] in _NOUNS and isinstance(loc[1], int):
        items = _items(node, str(loc[0]))
        node = items[loc[1]] if loc[1] < len(items) else None
        noun, name = _NOUNS[str(loc[0])], _name(node)
        where.append(f"{noun} {name!r} (#{loc[1]})" if name else f"{noun} #{loc[1]}")
        order.append((list(_NOUNS).index(str(loc[0])), loc[1]))
        loc = loc[2:]
    return order, ": ".join([*where, f"field {field_path(loc)!r}: {message}" if loc else message])


def _message(err: ErrorDetails) -> str:
    if err["type"] in ("model_type", "model_attributes_type"):
        err = {**err, "msg": "Input should be a valid dictionary"}  # not the class name
    return error_message(err, _unknown_field)


def _context(data: Any, base: Catalog | None) -> dict[str, tuple[str, ...]]:
    """The names a document's references may use: its own and the base table's."""
    own = {k: {n for x in _items(data, k) if (n := _name(x))} for k in ("platforms", "gpus")}
    platforms = sorted(own["platforms"] | set(base.platform_names if base else ()))
    gpus = sorted(own["gpus"] | set(base.gpu_names if base else ()))
    return {"platforms": tuple(platforms), "gpus": tuple(gpus), "archs": (*gpus, UNKNOWN_ARCH)}


def _validated(data: object, base: Catalog | None) -> tuple[Catalog | None, list[str]]:
    """``data`` as a catalog and every problem of it against the names of ``base``.

    ``base``: ``None`` for the bundled table itself. The catalog is ``None`` when the model
    refuses ``data``.
    """
    found, doc = list(_duplicates(data)), None
    try:
        doc = Catalog.model_validate(data, context=_context(data, base))
    except ValidationError as exc:
        found[:0] = [(tuple(e["loc"]), _message(e)) for e in exc.errors(include_url=False)]
    problems = [_problem(data, loc, message) for loc, message in found]
    return doc, [text for _, text in sorted(problems, key=lambda p: p[0])]


def _merge_problems(base: Catalog, data: Any) -> list[str]:
    """What a valid site document may not do to the table it joins."""
    platforms = [n for p in _items(data, "platforms") if (n := _name(p))]
    problems = [
        f"platform {n!r}: the table already has a platform of that name; choose another "
        f"name, or add entries with when.platform: {n}"
        for n in platforms
        if n in base.platform_names
    ]
    problems += [
        f"entry {n!r}: the table already has an entry of that name; choose another name"
        for kind, _, item in _located(data)
        if kind == "entries" and (n := _name(item)) in base.names
    ]
    problems += [
        f"field {key!r}: GPU models come with the bundled table; set a platform's "
        "gpuDefaults instead"
        for key in ("gpus", "gpuFallback")
        if key in data
    ]
    return problems + [
        f"platform {_name(p)!r}: a site platform needs detection rules (detect); only the "
        f"bundled {base.default_platform.name!r} is the fallback"
        for p in _items(data, "platforms")
        if not p.get("detect")
    ]


# --------------------------------------------------------------------------- loading


def parse_catalog(text: str, origin: str = "<string>", base: Catalog | None = None) -> Catalog:
    """The catalog of YAML text, its ``entries`` in evaluation order (not merged).

    A site document (``base``: the table it joins, by default the bundled one) may use the
    names of that table. Raises :class:`CatalogError` listing every problem.
    """
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise CatalogError(origin, [f"not valid YAML: {exc}"]) from exc
    if base is None and origin != _BUNDLED_ORIGIN:
        base = bundled()
    doc, problems = _validated(data, base)
    if base is not None and not problems:
        problems = _merge_problems(base, data)
    if problems or doc is None:
        raise CatalogError(origin, problems)
    nested = [
        e.model_copy(update={"when": e.when.model_copy(update={"platform": [p.name]})})
        for p in doc.platforms
        for e in p.entries
    ]
    return doc.model_copy(update={"entries": [*doc.entries, *nested]})


_BUNDLED_ORIGIN = "krm_fn/data/platforms.yaml"


@lru_cache(maxsize=1)
def bundled() -> Catalog:
    """The bundled table, read and validated once per process."""
    return parse_catalog(read_text(BUNDLED_PATH, _BUNDLED_ORIGIN), _BUNDLED_ORIGIN)


@lru_cache(maxsize=16)
def _merged(files: tuple[tuple[str, str], ...]) -> Catalog:
    table = bundled()
    for text, origin in files:
        site = parse_catalog(text, origin, table)
        table = table.model_copy(
            update={
                "entries": [*table.entries, *site.entries],
                "platforms": [*table.platforms, *site.platforms],
            }
        )
    return table


def load_catalog(paths: Sequence[str | Path] = ()) -> Catalog:
    """The bundled table merged with the site catalogs at ``paths``, in order.

    Raises :class:`CatalogError` when a file is unreadable or invalid.
    """
    if not paths:
        return bundled()
    return _merged(tuple((read_text(p, str(p)), str(p)) for p in paths))


def read_text(path: str | Path, origin: str) -> str:
    """The text of a catalog file; an unreadable file is a :class:`CatalogError`."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(origin, [f"cannot read: {exc}"]) from exc
