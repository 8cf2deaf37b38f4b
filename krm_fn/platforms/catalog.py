"""The platform override catalog: typed model, loader, and resolver.

One job: read ``krm_fn/data/platforms.yaml`` into validated, immutable objects and, for one
:class:`PlatformContext` (platform × GPU architecture × framework × node shape), merge
every matching entry into one :class:`ResolvedOverlay` that the render applies.

Invariants:
    * A loaded :class:`Catalog` is immutable and fully validated: unknown fields,
      unknown platform/architecture/framework names, bad env names, unknown template
      placeholders and unpaired volumes are refused with a :class:`CatalogError` whose
      message names the entry and the field. Validation is hand-written (no pydantic) and
      reports every problem of the document at once; the cross-field checks of an entry
      (volume pairing, "sets nothing") run once that entry's fields are valid.
    * The bundled catalog is read from ``krm_fn/data/platforms.json``, a snapshot of the
      parsed YAML written by :func:`snapshot_text` (``python -m krm_fn.platforms.catalog``
      rewrites it; a test fails when it is stale). The snapshot embeds the YAML text it was
      made from: when that differs from ``platforms.yaml`` (an edit without regenerating),
      the YAML itself is parsed and validated instead, so a stale snapshot is never used.
      The snapshot is not re-validated at run time (the tests validate it); any other
      catalog (:func:`load_catalog` with a path, :func:`parse_catalog`) always is.
    * :func:`resolve` is pure: the same catalog and context always give an equal
      overlay, and every mapping/list in the overlay is a fresh copy (mutating it never
      changes the catalog).
    * Merge semantics (NVCRE's, see docs/platforms.md; entries in file order):
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
    * Framework handling: for ``mpi`` the ``forwardEnv`` of each entry becomes ``-x`` pairs in
      ``mpi_args`` (and is listed in ``forward_env``); for ``torch``/``exec`` it joins
      ``trainer_env`` (the TrainJob's ``spec.trainer.env``) and ``mpi_args`` is empty.
    * Templates ``{gpusPerNode}``, ``{nicsPerNode}`` and ``{enableMNNVL}`` are substituted in
      env values, mpiArgs, preCommand, podAnnotations and resources. A resources value (or a
      claim count) that is exactly ``"{nicsPerNode|int}"`` (or ``gpusPerNode``) renders as an
      integer; a templated value that renders to 0 is dropped (no zero-count request or
      claim). ``${VAR}`` shell syntax is never treated as a template.
    * Cheap to import: stdlib only, no regular expressions; the model classes are frozen
      dataclasses with ``__slots__``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from krm_fn.platforms.detect import PLATFORMS, node_gke_accelerators, node_instance_types
from krm_fn.platforms.gpu import GPU_ARCHITECTURES, UNKNOWN_ARCH, gpu_defaults, parse_gpu_product

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DEFAULT_CATALOG_PATH",
    "DEFAULT_CATALOG_RESOURCE",
    "FRAMEWORKS",
    "SNAPSHOT_PATH",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "ClaimTemplate",
    "ClaimTemplateSpec",
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
    "snapshot_text",
    "validate_catalog_data",
    "write_snapshot",
]

DEFAULT_CATALOG_RESOURCE = "data/platforms.yaml"
"""Location of the bundled catalog inside the ``krm_fn`` package."""

_PACKAGE_DIR = os.path.dirname(os.path.dirname(__file__))
DEFAULT_CATALOG_PATH = os.path.join(_PACKAGE_DIR, "data", "platforms.yaml")
"""The bundled catalog file (wheel and editable installs alike)."""

SNAPSHOT_PATH = os.path.join(_PACKAGE_DIR, "data", "platforms.json")
"""The generated JSON snapshot of :data:`DEFAULT_CATALOG_PATH` (see :func:`snapshot_text`)."""

FRAMEWORKS: tuple[str, ...] = ("exec", "mpi", "torch")
"""WorkloadRun framework kinds an entry can be restricted to, sorted."""

Framework = Literal["mpi", "torch", "exec"]

TEMPLATE_VARIABLES: tuple[str, ...] = ("gpusPerNode", "nicsPerNode", "enableMNNVL")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_WORD = _LETTERS | frozenset("0123456789_")
_ENTRY_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
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
# A placeholder is ``{name}`` or ``{name|filter}`` (name: a letter, then letters, digits or
# "_"; filter: letters) not preceded by "$". Scanned by hand: the equivalent regular
# expression costs more to compile than the whole bundled catalog costs to load.


def _placeholder_at(value: str, start: int) -> tuple[int, str, str | None] | None:
    """The placeholder whose ``{`` is at ``start``: (end, name, ``|filter`` or None)."""
    if start > 0 and value[start - 1] == "$":
        return None
    size = len(value)
    end = start + 1
    if end >= size or value[end] not in _LETTERS:
        return None
    end += 1
    while end < size and value[end] in _WORD:
        end += 1
    name = value[start + 1 : end]
    flt = None
    if end < size and value[end] == "|":
        stop = end + 1
        while stop < size and value[stop] in _LETTERS:
            stop += 1
        if stop == end + 1:
            return None
        flt, end = value[end:stop], stop
    if end < size and value[end] == "}":
        return end + 1, name, flt
    return None


def _placeholders(value: str) -> list[tuple[int, int, str, str | None]]:
    """Every placeholder in ``value``: (start, end, name, filter), left to right."""
    found = []
    start = value.find("{")
    while start >= 0:
        match = _placeholder_at(value, start)
        if match is None:
            start = value.find("{", start + 1)
        else:
            found.append((start, *match))
            start = value.find("{", match[0])
    return found


def _template_problem(value: str, *, allow_int: bool = False) -> str | None:
    """The first unknown placeholder or misplaced ``|int`` filter in ``value``, if any."""
    if "{" not in value:
        return None
    for start, end, variable, flt in _placeholders(value):
        text = value[start:end]
        if variable not in TEMPLATE_VARIABLES:
            return (
                f"unknown template placeholder {text!r} in {value!r}: "
                f"allowed are {', '.join('{' + v + '}' for v in TEMPLATE_VARIABLES)}"
            )
        if flt is None:
            continue
        if flt != "|int":
            return f"unknown template filter {flt!r} in {value!r}: only '|int' exists"
        if not allow_int or text != value:
            return (
                f"{value!r}: the '|int' filter is only allowed as a whole resources value, "
                "e.g. '{nicsPerNode|int}'"
            )
    return None


def _render(value: str, variables: Mapping[str, int]) -> str:
    if "{" not in value:
        return value
    parts: list[str] = []
    last = 0
    for start, end, variable, _flt in _placeholders(value):
        parts += (value[last:start], str(variables[variable]))
        last = end
    parts.append(value[last:])
    return "".join(parts)


def _render_resource(value: str | int, variables: Mapping[str, int]) -> str | int | None:
    """Render one resources value; ``None`` means "drop it" (templated and zero)."""
    if isinstance(value, int):
        return value
    if value.startswith("{") and value.endswith("|int}"):
        match = _placeholder_at(value, 0)
        if match is not None and match[0] == len(value):
            number = variables[match[1]]
            return number if number != 0 else None
    rendered = _render(value, variables)
    if rendered != value and rendered.strip() == "0":
        return None
    return rendered


# --------------------------------------------------------------------------- model


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
class ClaimTemplateSpec:
    """A DRA ``ResourceClaimTemplate`` an entry adds, and the pod claim that uses it.

    Attributes:
        claim: The pod's ``resourceClaims[].name`` (and the ``node`` container's claim).
        suffix: The template is named ``<run>-<suffix>``.
        request: ``spec.spec.devices.requests[0].name``.
        device_class: ``exactly.deviceClassName``.
        count: ``exactly.count``: an integer, or ``"{gpusPerNode|int}"`` /
            ``"{nicsPerNode|int}"``; a count that renders to 0 drops the template and claim.

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
    claim_templates: tuple[ClaimTemplateSpec, ...] | None = None


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


# --------------------------------------------------------------------------- validation
# Messages follow the wording users of the pydantic model saw ("Field required", "Extra
# inputs are not permitted", "Input should be a valid string (got 1; ...)"); a location is
# written with the YAML names: ``env[0].value``, ``when.platform``, ``resources.limits``.

_ENTRY_FIELDS = frozenset(
    {
        "name",
        "source",
        "inferred",
        "when",
        "env",
        "forwardEnv",
        "mpiArgs",
        "resources",
        "nicResourceName",
        "volumes",
        "volumeMounts",
        "securityContext",
        "tolerations",
        "podAnnotations",
        "topologyKey",
        "preCommand",
        "gpusPerNode",
        "nicsPerNode",
        "trainerEnv",
        "computeDomain",
        "claimTemplates",
    }
)
_SETTINGS = (
    "env", "forwardEnv", "mpiArgs", "resources", "nicResourceName", "volumes",
    "securityContext", "tolerations", "podAnnotations", "topologyKey", "preCommand",
    "gpusPerNode", "nicsPerNode", "trainerEnv", "computeDomain", "claimTemplates",
)  # fmt: skip
_WHEN_FIELDS = frozenset(
    {"platform", "gpuArchitecture", "frameworks", "instanceTypes", "gkeAccelerator", "defaultShape"}
)
_WHEN_NAMES: dict[str, tuple[str, ...] | None] = {
    "platform": PLATFORMS,
    "gpuArchitecture": (*GPU_ARCHITECTURES, UNKNOWN_ARCH),
    "frameworks": None,
    "instanceTypes": None,
    "gkeAccelerator": None,
}
_FRAMEWORK_CHOICES = "Input should be 'mpi', 'torch' or 'exec'"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _valid_entry_name(name: str) -> bool:
    return (
        0 < len(name) <= 63
        and set(name) <= _ENTRY_NAME_CHARS
        and not name.startswith("-")
        and not name.endswith("-")
    )


def _valid_env_name(name: str) -> bool:
    return bool(name) and name[0] in _LETTERS | {"_"} and set(name) <= _WORD


class _Report:
    """The problems found so far; ``where`` prefixes those of the current entry."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.where = ""

    def add(self, loc: str, message: str) -> None:
        """Record ``message`` for the field at ``loc`` ("" = the entry or document)."""
        text = f"field {loc!r}: {message}" if loc else message
        self.problems.append(f"{self.where}: {text}" if self.where else text)

    def is_str(self, loc: str, value: object) -> bool:
        if isinstance(value, str):
            return True
        self.add(
            loc,
            f"Input should be a valid string (got {value!r}; "
            "quote numbers and booleans meant as text)",
        )
        return False

    def is_bool(self, loc: str, value: object) -> bool:
        if isinstance(value, bool):
            return True
        self.add(loc, f"Input should be a valid boolean (got {value!r})")
        return False

    def is_int(self, loc: str, value: object, minimum: int) -> bool:
        if not _is_int(value):
            self.add(loc, f"Input should be a valid integer (got {value!r})")
            return False
        if value < minimum:  # type: ignore[operator]
            self.add(loc, f"Input should be greater than or equal to {minimum}")
            return False
        return True

    def is_list(self, loc: str, value: object) -> bool:
        if isinstance(value, list | tuple):
            return True
        self.add(loc, f"Input should be a valid list (got {value!r})")
        return False

    def is_mapping(self, loc: str, value: object, *, string_keys: bool = False) -> bool:
        if not isinstance(value, dict):
            self.add(loc, "Input should be a valid dictionary")
            return False
        bad = [key for key in value if not isinstance(key, str)]
        for key in bad if string_keys else ():
            self.add(loc, f"keys should be strings (got {key!r})")
        return not (string_keys and bad)

    def fields(
        self, loc: str, value: Mapping[Any, Any], allowed: frozenset[str], required: Sequence[str]
    ) -> None:
        for name in required:
            if name not in value:
                self.add(f"{loc}.{name}" if loc else name, "Field required")
        for name in value:
            if name not in allowed:
                self.add(f"{loc}.{name}" if loc else str(name), "Extra inputs are not permitted")


def _check_when(r: _Report, when: object) -> None:
    if not r.is_mapping("when", when):
        return
    assert isinstance(when, dict)
    before = len(r.problems)
    r.fields("when", when, _WHEN_FIELDS, ())
    for key, allowed in _WHEN_NAMES.items():
        value = when.get(key)
        if value is None:
            continue
        loc = f"when.{key}"
        names = [value] if isinstance(value, str) else value
        if not r.is_list(loc, names):
            continue
        typed = True
        for index, name in enumerate(names):
            if key == "frameworks":
                if not isinstance(name, str) or name not in FRAMEWORKS:
                    r.add(f"{loc}[{index}]", f"{_FRAMEWORK_CHOICES} (got {name!r})")
                    typed = False
            elif not r.is_str(f"{loc}[{index}]", name):
                typed = False
        if not typed:
            continue
        unknown = [name for name in names if allowed is not None and name not in allowed]
        for name in unknown:
            what = "platform" if key == "platform" else "GPU architecture"
            r.add(loc, f"unknown {what} {name!r}: must be one of {', '.join(allowed or ())}")
        if not unknown and (not names or not all(names)):
            r.add(loc, "must be a non-empty name or a non-empty list of non-empty names")
    if "defaultShape" in when:
        r.is_bool("when.defaultShape", when["defaultShape"])
    if (
        len(r.problems) == before
        and when.get("defaultShape") is True
        and when.get("instanceTypes") is None
        and when.get("gkeAccelerator") is None
    ):
        r.add("when", "defaultShape needs instanceTypes or gkeAccelerator")


def _check_env(r: _Report, key: str, items: object) -> None:
    if not r.is_list(key, items):
        return
    assert isinstance(items, list | tuple)
    seen: set[str] = set()
    twice: set[str] = set()
    for index, item in enumerate(items):
        loc = f"{key}[{index}]"
        if not r.is_mapping(loc, item):
            continue
        assert isinstance(item, dict)
        r.fields(loc, item, frozenset({"name", "value", "whenGpusPerNode"}), ("name", "value"))
        counts = item.get("whenGpusPerNode")
        if counts is not None and r.is_list(f"{loc}.whenGpusPerNode", counts):
            for index2, count in enumerate(counts):
                r.is_int(f"{loc}.whenGpusPerNode[{index2}]", count, 1)
        if "name" in item and r.is_str(f"{loc}.name", item["name"]):
            name = item["name"]
            if not _valid_env_name(name):
                r.add(f"{loc}.name", f"invalid environment variable name {name!r}")
            elif name in seen and name not in twice and "whenGpusPerNode" not in item:
                twice.add(name)
                r.add(key, f"{name} is set twice")
            seen.add(name)
        if "value" in item and r.is_str(f"{loc}.value", item["value"]):
            problem = _template_problem(item["value"])
            if problem:
                r.add(f"{loc}.value", problem)


def _check_strings(r: _Report, key: str, items: object) -> None:
    if not r.is_list(key, items):
        return
    assert isinstance(items, list | tuple)
    for index, item in enumerate(items):
        if r.is_str(f"{key}[{index}]", item):
            problem = _template_problem(item)
            if problem:
                r.add(key, problem)


def _check_resources(r: _Report, resources: object) -> None:
    if not r.is_mapping("resources", resources):
        return
    assert isinstance(resources, dict)
    r.fields("resources", resources, frozenset({"limits", "requests"}), ())
    for section in ("limits", "requests"):
        if section not in resources:
            continue
        loc = f"resources.{section}"
        quantities = resources[section]
        if not r.is_mapping(loc, quantities, string_keys=True):
            continue
        for name, quantity in quantities.items():
            if quantity is None:
                continue  # null deletes the name
            if not isinstance(quantity, str) and not _is_int(quantity):
                r.add(
                    f"{loc}.{name}", f"Input should be a valid string or integer (got {quantity!r})"
                )
            elif not name:
                r.add(loc, "empty resource name")
            elif isinstance(quantity, int) and quantity < 0:
                r.add(loc, f"{name}: negative quantity {quantity}")
            elif isinstance(quantity, str):
                problem = _template_problem(quantity, allow_int=True)
                if problem:
                    r.add(loc, f"{name}: {problem}")


def _check_objects(r: _Report, key: str, items: object, required: Sequence[str]) -> bool:
    """A list of Kubernetes objects (volumes, mounts, tolerations) with ``required`` keys."""
    if not r.is_list(key, items):
        return False
    assert isinstance(items, list | tuple)
    ok = True
    for index, item in enumerate(items):
        if not r.is_mapping(f"{key}[{index}]", item, string_keys=True):
            ok = False
            continue
        for name in required:
            if not isinstance(item.get(name), str) or not item[name]:
                r.add(key, f"item {index} of {key} needs a non-empty string {name!r}")
                ok = False
    return ok


def _check_tolerations(r: _Report, items: object) -> None:
    if not _check_objects(r, "tolerations", items, ()):
        return
    assert isinstance(items, list | tuple)
    for index, toleration in enumerate(items):
        operator = toleration.get("operator", "Equal")
        effect = toleration.get("effect")
        if not isinstance(operator, str) or operator not in _TOLERATION_OPERATORS:
            r.add("tolerations", f"item {index}: unknown operator {operator!r}")
        if effect is not None and (
            not isinstance(effect, str) or effect not in _TOLERATION_EFFECTS
        ):
            r.add("tolerations", f"item {index}: unknown effect {effect!r}")


def _check_entry(r: _Report, entry: object) -> None:
    if not r.is_mapping("", entry):
        return
    assert isinstance(entry, dict)
    before = len(r.problems)
    r.fields("", entry, _ENTRY_FIELDS, ("name", "source"))
    if "name" in entry and r.is_str("name", entry["name"]):
        name = entry["name"]
        if not _valid_entry_name(name):
            r.add("name", f"invalid entry name {name!r}: use lower-case letters, digits, '-'")
    source: Any = entry.get("source")
    if "source" in entry and r.is_str("source", source) and not source.strip():
        r.add("source", "source must cite where the values come from")
    if "inferred" in entry:
        r.is_bool("inferred", entry["inferred"])
    if "when" in entry:
        _check_when(r, entry["when"])
    value = entry.get
    for key in ("env", "forwardEnv", "trainerEnv"):
        if value(key) is not None:
            _check_env(r, key, entry[key])
    for key in ("mpiArgs", "preCommand"):
        if value(key) is not None:
            _check_strings(r, key, entry[key])
    if value("resources") is not None:
        _check_resources(r, entry["resources"])
    for key in ("nicResourceName", "topologyKey"):
        if value(key) is not None and r.is_str(key, entry[key]) and not entry[key].strip():
            r.add(key, "must not be empty")
    if value("volumes") is not None:
        _check_objects(r, "volumes", entry["volumes"], ("name",))
    if value("volumeMounts") is not None:
        _check_objects(r, "volumeMounts", entry["volumeMounts"], ("name", "mountPath"))
    context = value("securityContext")
    if context is not None and r.is_mapping("securityContext", context, string_keys=True):
        unknown = sorted(set(context) - _CONTAINER_SECURITY_CONTEXT_FIELDS)
        if unknown:
            r.add(
                "securityContext",
                f"unknown container securityContext field(s): {', '.join(unknown)}",
            )
    if value("tolerations") is not None:
        _check_tolerations(r, entry["tolerations"])
    annotations = value("podAnnotations")
    if annotations is not None and r.is_mapping("podAnnotations", annotations, string_keys=True):
        for key, text in annotations.items():
            if r.is_str(f"podAnnotations.{key}", text):
                problem = _template_problem(text)
                if problem:
                    r.add("podAnnotations", problem)
    for key, minimum in (("gpusPerNode", 1), ("nicsPerNode", 0)):
        if value(key) is not None:
            r.is_int(key, entry[key], minimum)
    flag = value("computeDomain")
    if flag is not None and r.is_bool("computeDomain", flag) and flag is False:
        r.add("computeDomain", "set it to true or leave it out")
    if value("claimTemplates") is not None:
        _check_claim_templates(r, entry["claimTemplates"])
    if len(r.problems) == before:
        _check_entry_as_a_whole(r, entry)


_CLAIM_TEMPLATE_FIELDS = frozenset({"claim", "suffix", "request", "deviceClassName", "count"})


def _check_claim_templates(r: _Report, items: object) -> None:
    if not r.is_list("claimTemplates", items):
        return
    assert isinstance(items, list | tuple)
    for index, item in enumerate(items):
        loc = f"claimTemplates[{index}]"
        if not r.is_mapping(loc, item, string_keys=True):
            continue
        assert isinstance(item, dict)
        r.fields(loc, item, _CLAIM_TEMPLATE_FIELDS, tuple(sorted(_CLAIM_TEMPLATE_FIELDS)))
        for key in ("claim", "suffix", "request", "deviceClassName"):
            text: Any = item.get(key)
            if key not in item or not r.is_str(f"{loc}.{key}", text):
                continue
            labels = text.split(".") if key == "deviceClassName" else [text]
            if not all(_valid_entry_name(label) for label in labels):
                what = "DNS subdomain" if key == "deviceClassName" else "DNS label"
                r.add(f"{loc}.{key}", f"{text!r} is not a {what}")
        count: Any = item.get("count")
        if "count" not in item:
            continue
        if _is_int(count):
            r.is_int(f"{loc}.count", count, 1)
        elif r.is_str(f"{loc}.count", count):
            problem = _template_problem(count, allow_int=True)
            if problem or not count.endswith("|int}"):
                r.add(f"{loc}.count", problem or "use an integer or '{gpusPerNode|int}'")


def _check_entry_as_a_whole(r: _Report, entry: Mapping[str, Any]) -> None:
    """Cross-field rules, checked once every field of the entry is valid."""
    volumes, mounts = entry.get("volumes"), entry.get("volumeMounts")
    if (volumes is None) != (mounts is None):
        r.add("", "field 'volumes' and field 'volumeMounts' must be set together")
    names = {v["name"] for v in volumes or ()}
    for mount in mounts or ():
        if mount["name"] not in names:
            r.add(
                "", f"field 'volumeMounts': mount {mount['name']!r} names no volume of this entry"
            )
    if all(entry.get(key) is None for key in _SETTINGS):
        r.add("", "entry sets nothing (no env, mpiArgs, resources, ...)")


def validate_catalog_data(data: object) -> list[str]:
    """Check a parsed catalog document against the catalog format.

    Args:
        data: The document as parsed from YAML or JSON.

    Returns:
        Every problem found (empty when the document is valid), one line each, naming the
        entry (``entry 'aws-p5' (#4)``) and the field (``field 'when.platform'``).

    """
    if not isinstance(data, dict):
        return ["the document must be a mapping with 'version' and 'entries'"]
    r = _Report()
    r.fields("", data, frozenset({"version", "entries"}), ("version", "entries"))
    if "version" in data and not (_is_int(data["version"]) and data["version"] == 1):
        r.add("version", f"Input should be 1 (got {data['version']!r})")
    entries = data.get("entries")
    if "entries" not in data or not r.is_list("entries", entries):
        return r.problems
    assert isinstance(entries, list | tuple)
    first: dict[str, int] = {}
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        r.where = f"entry {name!r} (#{index})" if name else f"entry #{index}"
        _check_entry(r, entry)
        if isinstance(name, str):
            if name in first:
                r.add("name", f"duplicate entry name (first used by entry #{first[name]})")
            else:
                first[name] = index
    return r.problems


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


def _claim_templates(items: Any) -> tuple[ClaimTemplateSpec, ...] | None:
    if items is None:
        return None
    return tuple(
        [
            ClaimTemplateSpec(
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


def _build(data: Mapping[str, Any]) -> Catalog:
    """The catalog of a document :func:`validate_catalog_data` accepts (not checked again)."""
    return Catalog(data["version"], tuple([_build_entry(raw) for raw in data["entries"]]))


# --------------------------------------------------------------------------- loading


def _parse_yaml(text: str, origin: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise CatalogError(origin, [f"not valid YAML: {exc}"]) from exc


def _validated(data: Any, origin: str) -> Mapping[str, Any]:
    problems = validate_catalog_data(data)
    if problems:
        raise CatalogError(origin, problems)
    assert isinstance(data, dict)
    return data


def parse_catalog(text: str, origin: str = "<string>") -> Catalog:
    """Parse and validate catalog YAML text.

    Args:
        text: The YAML document.
        origin: Name used in error messages (a path or resource name).

    Returns:
        The validated catalog.

    Raises:
        CatalogError: The YAML is malformed or does not match the catalog format; the
            error lists every problem.

    """
    return _build(_validated(_parse_yaml(text, origin), origin))


def _read_text(path: str | Path, origin: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise CatalogError(origin, [f"cannot read: {exc}"]) from exc


def snapshot_text(yaml_text: str, origin: str = "<string>") -> str:
    """The JSON snapshot of catalog YAML text, as ``krm_fn/data/platforms.json`` holds it.

    The snapshot is ``{"yaml": <the YAML text>, "catalog": <the parsed document>}``: the
    loader uses ``catalog`` only while ``yaml`` equals the bundled YAML file.

    Args:
        yaml_text: The catalog YAML.
        origin: Name used in error messages.

    Returns:
        The JSON text (one key per line, ending in a newline).

    Raises:
        CatalogError: The YAML is not a valid catalog (no snapshot is made of it).

    """
    import json

    data = _validated(_parse_yaml(yaml_text, origin), origin)
    snapshot = {
        "comment": "generated from platforms.yaml by python -m krm_fn.platforms.catalog; "
        "do not edit",
        "yaml": yaml_text,
        "catalog": data,
    }
    return json.dumps(snapshot, ensure_ascii=False, indent=1) + "\n"


def write_snapshot(
    yaml_path: str | Path | None = None, json_path: str | Path | None = None
) -> bool:
    """Regenerate the JSON snapshot of a catalog file.

    Args:
        yaml_path: The catalog YAML (default: the bundled ``platforms.yaml``).
        json_path: The snapshot to write (default: the bundled ``platforms.json``).

    Returns:
        Whether the snapshot file changed.

    Raises:
        CatalogError: The YAML is unreadable or invalid.

    """
    yaml_path = DEFAULT_CATALOG_PATH if yaml_path is None else yaml_path
    json_path = SNAPSHOT_PATH if json_path is None else json_path
    wanted = snapshot_text(_read_text(yaml_path, str(yaml_path)), str(yaml_path))
    try:
        with open(json_path, encoding="utf-8") as handle:
            if handle.read() == wanted:
                return False
    except OSError:
        pass
    with open(json_path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(wanted)
    return True


def _read_snapshot() -> Mapping[str, Any] | None:
    try:
        with open(SNAPSHOT_PATH, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    import json  # the render imports it anyway (Secret builder)

    try:
        snapshot = json.loads(text)
    except ValueError:
        return None
    return snapshot if isinstance(snapshot, dict) else None


_DEFAULT: Catalog | None = None


def _load_default() -> Catalog:
    global _DEFAULT
    if _DEFAULT is None:
        origin = f"krm_fn/{DEFAULT_CATALOG_RESOURCE}"
        text = _read_text(DEFAULT_CATALOG_PATH, origin)
        snapshot = _read_snapshot()
        if snapshot is not None and snapshot.get("yaml") == text:
            _DEFAULT = _build(snapshot["catalog"])
        else:  # no snapshot, or made from another version of the YAML
            _DEFAULT = parse_catalog(text, origin)
    return _DEFAULT


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load and validate a catalog.

    Args:
        path: A catalog YAML file, always fully validated; ``None`` loads the bundled
            ``krm_fn/data/platforms.yaml`` (from its JSON snapshot when that is current;
            once per process, then cached).

    Returns:
        The validated catalog.

    Raises:
        CatalogError: The file is unreadable or invalid.

    """
    if path is None:
        return _load_default()
    return parse_catalog(_read_text(path, str(path)), str(path))


# --------------------------------------------------------------------------- resolving


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
class ClaimTemplate:
    """A resolved DRA claim: template ``<run>-<suffix>`` asking ``count`` devices of a class."""

    claim: str
    suffix: str
    request: str
    device_class: str
    count: int


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


def _clone(value: Any) -> Any:
    """A deep copy of parsed YAML/JSON data (only dicts and lists are mutable there)."""
    if isinstance(value, dict):
        return {key: _clone(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clone(item) for item in value]
    return value


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _deep_merge(base[key], value)
        else:
            base[key] = _clone(value)
    return base


def _merge_env(
    target: dict[str, str], items: Iterable[EnvVarSpec], variables: Mapping[str, int]
) -> None:
    gpus = variables["gpusPerNode"]
    for var in items:
        if var.when_gpus_per_node is None or gpus in var.when_gpus_per_node:
            target[var.name] = _render(var.value, variables)


def _to_mpi_args(items: Iterable[EnvVarSpec], variables: Mapping[str, int]) -> list[str]:
    """NVCRE's ``toMpiArgs``: ``-x NAME=value`` per variable, in order."""
    env: dict[str, str] = {}
    _merge_env(env, items, variables)
    return [arg for name, value in env.items() for arg in ("-x", f"{name}={value}")]


def resolve(catalog: Catalog, ctx: PlatformContext) -> ResolvedOverlay:
    """Merge every catalog entry matching ``ctx`` into one overlay.

    Args:
        catalog: The catalog (see :func:`load_catalog`).
        ctx: Platform, GPU architecture, framework, node shape and node counts.

    Returns:
        The overlay; ``applied`` lists the matched entry names in order.

    """
    variables = {
        "gpusPerNode": ctx.gpus_per_node,
        "nicsPerNode": ctx.nics_per_node,
        "enableMNNVL": 1 if ctx.mnnvl else 0,
    }
    mpi = ctx.framework == "mpi"
    applied: list[str] = []
    env: dict[str, str] = {}
    forward_env: dict[str, str] = {}
    trainer_env: dict[str, str] = {}
    mpi_args: list[str] = []
    resources: dict[str, dict[str, str | int | None]] = {}
    volumes: tuple[dict[str, Any], ...] = ()
    volume_mounts: tuple[dict[str, Any], ...] = ()
    security_context: dict[str, Any] = {}
    tolerations: tuple[dict[str, Any], ...] = ()
    pod_annotations: dict[str, str] = {}
    topology_key: str | None = None
    pre_command: list[str] = []
    nic_resource_name: str | None = None
    compute_domain = False
    claims: dict[str, ClaimTemplate | None] = {}

    for entry in matching_entries(catalog, ctx):
        applied.append(entry.name)
        _merge_env(env, entry.env or (), variables)
        _merge_env(trainer_env, entry.trainer_env or (), variables)
        if mpi:
            # NVCRE prepends each matching entry's mpiArgs to the ones before it
            # (applyWRPreTemplateOverrides), so a later entry's arguments come first.
            own = [_render(arg, variables) for arg in entry.mpi_args or ()]
            own += _to_mpi_args(entry.forward_env or (), variables)
            mpi_args[:0] = own
            _merge_env(forward_env, entry.forward_env or (), variables)
        else:
            _merge_env(trainer_env, entry.forward_env or (), variables)
        if entry.resources is not None:
            for section in ("limits", "requests"):
                for name, raw in getattr(entry.resources, section).items():
                    target = resources.setdefault(section, {})
                    if raw is None:
                        target[name] = None  # deletes the name on the container
                        continue
                    rendered = _render_resource(raw, variables)
                    if rendered is None:
                        target.pop(name, None)
                    else:
                        target[name] = rendered
        if entry.volumes is not None and entry.volume_mounts is not None:
            volumes = tuple([_clone(v) for v in entry.volumes])
            volume_mounts = tuple([_clone(m) for m in entry.volume_mounts])
        if entry.security_context is not None:
            _deep_merge(security_context, entry.security_context)
        if entry.tolerations is not None:
            tolerations = tuple([_clone(t) for t in entry.tolerations])
        for key, value in (entry.pod_annotations or {}).items():
            pod_annotations[key] = _render(value, variables)
        if entry.topology_key is not None:
            topology_key = entry.topology_key
        if entry.pre_command is not None:
            pre_command += [_render(line, variables) for line in entry.pre_command]
        if entry.nic_resource_name is not None:
            nic_resource_name = entry.nic_resource_name
        compute_domain = compute_domain or entry.compute_domain
        for spec in entry.claim_templates or ():
            count = _render_resource(spec.count, variables)
            claims[spec.claim] = (
                ClaimTemplate(spec.claim, spec.suffix, spec.request, spec.device_class, count)
                if isinstance(count, int) and count > 0
                else None
            )

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
        pre_command=tuple(pre_command),
        nic_resource_name=nic_resource_name,
        trainer_env=tuple(EnvVar(k, v) for k, v in trainer_env.items()),
        compute_domain=compute_domain,
        claim_templates=tuple(c for c in claims.values() if c is not None),
    )


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
        mnnvl=counts.mnnvl if mnnvl is None else mnnvl,
    )


if __name__ == "__main__":  # python -m krm_fn.platforms.catalog: regenerate platforms.json
    print(f"{SNAPSHOT_PATH}: {'rewritten' if write_snapshot() else 'up to date'}")
