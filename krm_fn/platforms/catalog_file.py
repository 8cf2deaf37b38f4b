"""The platform catalog FILE schema (pydantic v2) and its validation.

One job: say whether a parsed catalog document (``krm_fn/data/platforms.yaml`` or a catalog
a user passes) is valid, and if not, every problem at once, one line each, naming the entry
(by its name where it has one), the field path, the bad value and what is allowed::

    entry 'a' (#0): field 'when.platform': unknown platform 'awz': must be one of aws, ...

Invariants:
    * The models are the file format: camelCase keys (``alias_generator=to_camel``), unknown
      fields refused (``extra="forbid"``), strict types (``gpusPerNode: "8"`` and
      ``value: 1`` are errors, booleans are not integers), frozen. Kubernetes objects the
      catalog passes through (volumes, volume mounts) keep their unknown fields but must
      carry the keys the render relies on.
    * Rules of one field are field validators (names, templates, quantities, counts);
      rules across fields of an entry (volume pairing, "sets nothing") are model validators
      that run once the entry's fields are valid, so a misspelt setting is reported once, not
      again as "entry sets nothing"; the rule across entries (unique names) is checked on
      every entry that has a name, whatever else is wrong.
    * Errors are worded by :func:`krm_fn.api.validate.error_message`, as the WorkloadRun's are.
    * The models only validate: the values the render uses are the frozen dataclasses of
      :mod:`krm_fn.platforms.catalog`, built from the validated document by
      :func:`~krm_fn.platforms.catalog.build_catalog` (the same builder the JSON snapshot
      goes through, so YAML and snapshot give equal catalogs). Their field names are the
      dataclasses' (``tests/platforms/test_catalog_validation.py`` checks they agree).
    * Imported only when a YAML catalog is parsed (:func:`parse_catalog`, a stale or missing
      snapshot, ``load_catalog(path)``, regenerating the snapshot): never on a plain render,
      which reads the bundled catalog from its snapshot (``tests/test_lazy_imports.py``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PlainValidator,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from krm_fn.api.fields import fields_of, iter_models
from krm_fn.api.models import DNS1123_LABEL_RE
from krm_fn.api.validate import error_message, field_path
from krm_fn.platforms.catalog import Catalog, CatalogError, Framework, build_catalog
from krm_fn.platforms.detect import PLATFORMS
from krm_fn.platforms.gpu import GPU_ARCHITECTURES, UNKNOWN_ARCH
from krm_fn.platforms.templates import is_int_template, template_problem

__all__ = [
    "CatalogFile",
    "EntryFile",
    "parse_catalog",
    "read_catalog_document",
    "validate_catalog_data",
]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ENV_NAME_START = frozenset(_LETTERS + "_")
_ENV_NAME_CHARS = frozenset(_LETTERS + "_0123456789")
_DNS_LABEL_RULE = "at most 63 lower-case letters, digits or '-', not starting or ending with '-'"


# --------------------------------------------------------------------------- field rules


def _is_dns_label(name: str) -> bool:
    return len(name) <= 63 and DNS1123_LABEL_RE.match(name) is not None


def _entry_name(name: str) -> str:
    if not _is_dns_label(name):
        raise ValueError(f"invalid entry name {name!r}: use {_DNS_LABEL_RULE}")
    return name


def _dns_label(name: str) -> str:
    if not _is_dns_label(name):
        raise ValueError(f"{name!r} is not a DNS label: use {_DNS_LABEL_RULE}")
    return name


def _dns_subdomain(name: str) -> str:
    if len(name) > 253 or not all(_is_dns_label(label) for label in name.split(".")):
        raise ValueError(
            f"{name!r} is not a DNS subdomain: use DNS labels ({_DNS_LABEL_RULE}) joined by '.'"
        )
    return name


def _env_name(name: str) -> str:
    if not name or name[0] not in _ENV_NAME_START or not set(name) <= _ENV_NAME_CHARS:
        raise ValueError(
            f"invalid environment variable name {name!r}: use letters, digits and '_', "
            "not starting with a digit"
        )
    return name


def _template(value: str) -> str:
    problem = template_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _not_blank(what: str) -> AfterValidator:
    def check(value: str) -> str:
        if not value.strip():
            raise ValueError(what)
        return value

    return AfterValidator(check)


def _one_or_many(value: Any) -> Any:
    """``platform: aws`` is short for ``platform: [aws]``."""
    return [value] if isinstance(value, str) else value


def _names_of(what: str, allowed: tuple[str, ...] | None) -> AfterValidator:
    """A when-clause list: non-empty names, each one of ``allowed`` (when given)."""

    def check(names: list[str]) -> list[str]:
        unknown = [name for name in names if allowed is not None and name not in allowed]
        if unknown:
            raise ValueError(
                f"unknown {what} {', '.join(map(repr, unknown))}: must be one of "
                f"{', '.join(allowed or ())}"
            )
        if not names or not all(names):
            raise ValueError("must be a non-empty name or a non-empty list of non-empty names")
        return names

    return AfterValidator(check)


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
    """A claim count: an integer >= 1, or exactly ``"{gpusPerNode|int}"``/``"{nicsPerNode|int}"``."""
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


EntryName = Annotated[str, AfterValidator(_entry_name)]
DnsLabel = Annotated[str, AfterValidator(_dns_label)]
DnsSubdomain = Annotated[str, AfterValidator(_dns_subdomain)]
EnvName = Annotated[str, AfterValidator(_env_name)]
Template = Annotated[str, AfterValidator(_template)]
NonEmpty = Annotated[str, Field(min_length=1)]
Quantity = Annotated[int | str | None, PlainValidator(_quantity)]
ClaimCount = Annotated[int | str, PlainValidator(_claim_count)]


PlatformNames = Annotated[
    list[str], BeforeValidator(_one_or_many), _names_of("platform", PLATFORMS)
]
ArchitectureNames = Annotated[
    list[str],
    BeforeValidator(_one_or_many),
    _names_of("GPU architecture", (*GPU_ARCHITECTURES, UNKNOWN_ARCH)),
]
FrameworkNames = Annotated[
    list[Framework], BeforeValidator(_one_or_many), _names_of("framework", None)
]
ShapeNames = Annotated[list[str], BeforeValidator(_one_or_many), _names_of("name", None)]


# --------------------------------------------------------------------------- models


class _File(BaseModel):
    """Base: the file's camelCase keys, unknown keys refused, strict types, frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel, extra="forbid", strict=True, frozen=True, defer_build=True
    )


class _Object(_File):
    """Base of the Kubernetes objects an entry passes through: unknown keys are kept."""

    model_config = ConfigDict(extra="allow")


class WhenFile(_File):
    """``when``: every condition that is set must hold. A single name stands for a list."""

    platform: PlatformNames | None = None
    gpu_architecture: ArchitectureNames | None = None
    frameworks: FrameworkNames | None = None
    instance_types: ShapeNames | None = None
    gke_accelerator: ShapeNames | None = None
    default_shape: bool = False

    @model_validator(mode="after")
    def _default_shape_names_a_shape(self) -> WhenFile:
        if self.default_shape and self.instance_types is None and self.gke_accelerator is None:
            raise ValueError("defaultShape needs instanceTypes or gkeAccelerator")
        return self


class EnvVarFile(_File):
    """One ``{name, value}`` variable; ``whenGpusPerNode`` limits it to those GPU counts."""

    name: EnvName
    value: Template
    when_gpus_per_node: list[Annotated[int, Field(ge=1)]] | None = None


def _set_once(items: list[EnvVarFile]) -> list[EnvVarFile]:
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


EnvList = Annotated[list[EnvVarFile], AfterValidator(_set_once)]


class ResourcesFile(_File):
    """Container ``limits``/``requests``: a value may be a template; ``null`` deletes the name."""

    limits: dict[NonEmpty, Quantity] = Field(default_factory=dict)
    requests: dict[NonEmpty, Quantity] = Field(default_factory=dict)


class VolumeFile(_Object):
    """A pod volume (core/v1 Volume): any volume source, and a name the mounts refer to."""

    name: NonEmpty


class VolumeMountFile(_Object):
    """A container volume mount (core/v1 VolumeMount)."""

    name: NonEmpty
    mount_path: NonEmpty


class CapabilitiesFile(_File):
    """core/v1 Capabilities."""

    add: list[str] | None = None
    drop: list[str] | None = None


class SecurityContextFile(_File):
    """A container ``securityContext`` (core/v1 SecurityContext; the pod's has other fields)."""

    allow_privilege_escalation: bool | None = None
    app_armor_profile: dict[str, Any] | None = None
    capabilities: CapabilitiesFile | None = None
    privileged: bool | None = None
    proc_mount: str | None = None
    read_only_root_filesystem: bool | None = None
    run_as_group: Annotated[int, Field(ge=0)] | None = None
    run_as_non_root: bool | None = None
    run_as_user: Annotated[int, Field(ge=0)] | None = None
    se_linux_options: dict[str, Any] | None = None
    seccomp_profile: dict[str, Any] | None = None
    windows_options: dict[str, Any] | None = None


class TolerationFile(_File):
    """A pod toleration (core/v1 Toleration)."""

    key: str | None = None
    operator: Literal["Equal", "Exists"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = None


class ClaimTemplateFile(_File):
    """A DRA ResourceClaimTemplate ``<run>-<suffix>`` and the pod claim ``claim`` using it."""

    claim: DnsLabel
    suffix: DnsLabel
    request: DnsLabel
    device_class_name: DnsSubdomain
    count: ClaimCount


_SETTINGS = (
    "env", "forward_env", "mpi_args", "resources", "nic_resource_name", "volumes",
    "volume_mounts", "security_context", "tolerations", "pod_annotations", "topology_key", "pre_command",
    "gpus_per_node", "nics_per_node", "trainer_env", "compute_domain", "claim_templates",
)  # fmt: skip


class EntryFile(_File):
    """One catalog entry: a name, a cited source, a ``when`` condition and its settings."""

    name: EntryName
    source: Annotated[str, _not_blank("source must cite where the values come from")]
    inferred: bool = False
    when: WhenFile = Field(default_factory=WhenFile)
    env: EnvList | None = None
    forward_env: EnvList | None = None
    mpi_args: list[Template] | None = None
    resources: ResourcesFile | None = None
    nic_resource_name: Annotated[str, _not_blank("must not be empty")] | None = None
    volumes: list[VolumeFile] | None = None
    volume_mounts: list[VolumeMountFile] | None = None
    security_context: SecurityContextFile | None = None
    tolerations: list[TolerationFile] | None = None
    pod_annotations: dict[str, Template] | None = None
    topology_key: Annotated[str, _not_blank("must not be empty")] | None = None
    pre_command: list[Template] | None = None
    gpus_per_node: Annotated[int, Field(ge=1)] | None = None
    nics_per_node: Annotated[int, Field(ge=0)] | None = None
    trainer_env: EnvList | None = None
    compute_domain: bool | None = None
    claim_templates: list[ClaimTemplateFile] | None = None

    @field_validator("compute_domain")
    @classmethod
    def _compute_domain_is_true(cls, value: bool | None) -> bool | None:
        if value is False:
            raise ValueError("false sets nothing: set it to true or leave it out")
        return value

    @model_validator(mode="after")
    def _entry_as_a_whole(self) -> EntryFile:
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
        if all(getattr(self, key) is None for key in _SETTINGS):
            problems.append(
                "entry sets nothing: give it at least one of "
                + ", ".join(to_camel(key) for key in _SETTINGS)
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _duplicate_names(entries: Any) -> list[InitErrorDetails]:
    """An error for every entry reusing an earlier entry's name (whatever else is wrong)."""
    first: dict[str, int] = {}
    errors: list[InitErrorDetails] = []
    for index, entry in enumerate(entries if isinstance(entries, list) else ()):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue
        if name in first:
            message = f"duplicate entry name {name!r} (first used by entry #{first[name]})"
            errors.append(
                InitErrorDetails(
                    type=PydanticCustomError("value_error", message),
                    loc=("entries", index, "name"),
                    input=name,
                )
            )
        else:
            first[name] = index
    return errors


class CatalogFile(_File):
    """The whole file: ``version: 1`` and the ordered entries."""

    version: Literal[1]
    entries: list[EntryFile]

    @field_validator("version", mode="before")
    @classmethod
    def _version_is_the_integer_one(cls, value: Any) -> Any:
        if isinstance(value, bool):  # True == 1, but it is not the version number
            raise ValueError(f"value {value!r} is not allowed; expected 1")
        return value

    @model_validator(mode="wrap")
    @classmethod
    def _names_are_unique(
        cls, data: Any, handler: ModelWrapValidatorHandler[CatalogFile]
    ) -> CatalogFile:
        """Add the duplicate names to the other problems, so all are reported at once."""
        duplicates = _duplicate_names(data.get("entries") if isinstance(data, dict) else None)
        try:
            result = handler(data)
        except ValidationError as exc:
            raise ValidationError.from_exception_data(
                cls.__name__, [*_as_init_errors(exc), *duplicates]
            ) from None
        if duplicates:
            raise ValidationError.from_exception_data(cls.__name__, duplicates)
        return result


def _as_init_errors(exc: ValidationError) -> list[InitErrorDetails]:
    """Re-raisable copies of ``exc``'s errors (every one keeps its type, place and text)."""
    return [
        InitErrorDetails(
            type=err["type"], loc=err["loc"], input=err["input"], ctx=err.get("ctx", {})
        )
        for err in exc.errors(include_url=False)
    ]


# --------------------------------------------------------------------------- messages


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model that holds the field at ``loc`` (list indexes skipped)."""
    model: type[BaseModel] = CatalogFile
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for f in fields_of(model) if f.key == part), None)
        inner = next(iter_models(field.annotation), None) if field else None
        if inner is None:
            return None
        model = inner
    return model


def _unknown_field(loc: tuple[int | str, ...]) -> str:
    leaf = str(loc[-1]) if loc else ""
    model = _model_at(loc[:-1])
    assert model is not None, loc  # only a model refuses unknown fields
    known = [f.key for f in fields_of(model)]
    close = difflib.get_close_matches(leaf, known, n=1, cutoff=0.6)
    if close:
        return f"unknown field {leaf!r}: did you mean {close[0]!r}?"
    return f"unknown field {leaf!r}: allowed are {', '.join(known)}"


def _entry_label(data: Mapping[str, Any], index: int) -> str:
    entries = data.get("entries")
    entry = entries[index] if isinstance(entries, list) and index < len(entries) else None
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"entry {name!r} (#{index})" if isinstance(name, str) and name else f"entry #{index}"


def _problem(data: Any, err: ErrorDetails) -> str:
    loc = tuple(err["loc"])
    if not loc:
        return "the document must be a mapping with 'version' and 'entries'"
    if err["type"] == "model_type":
        err = {**err, "msg": "Input should be a valid dictionary"}  # not the class name
    message = error_message(err, _unknown_field)
    if loc[-1] == "[key]":  # a mapping's key, not its value, is wrong
        message, loc = f"key {loc[-2]!r}: {message}", loc[:-2]
    where = ""
    if len(loc) >= 2 and loc[0] == "entries" and isinstance(loc[1], int):
        where, loc = _entry_label(data, loc[1]), loc[2:]
    text = f"field {field_path(loc)!r}: {message}" if loc else message
    return f"{where}: {text}" if where else text


def _entry_index(err: ErrorDetails) -> int:
    loc = err["loc"]
    return loc[1] if len(loc) >= 2 and loc[0] == "entries" and isinstance(loc[1], int) else -1


def validate_catalog_data(data: object) -> list[str]:
    """Check a parsed catalog document against the catalog file schema.

    Args:
        data: The document as parsed from YAML or JSON.

    Returns:
        Every problem found (empty when the document is valid), one line each, in entry
        order, naming the entry (``entry 'aws-p5' (#4)``) and the field
        (``field 'when.platform'``), the bad value and what is allowed.

    """
    try:
        CatalogFile.model_validate(data)
    except ValidationError as exc:
        errors = sorted(exc.errors(include_url=False), key=_entry_index)
        return [_problem(data, err) for err in errors]
    return []


def read_catalog_document(text: str, origin: str = "<string>") -> Mapping[str, Any]:
    """Parse catalog YAML text and validate it.

    Args:
        text: The YAML document.
        origin: Name used in error messages (a path or resource name).

    Returns:
        The parsed document, valid.

    Raises:
        CatalogError: The YAML is malformed or does not match the schema; the error lists
            every problem.

    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise CatalogError(origin, [f"not valid YAML: {exc}"]) from exc
    problems = validate_catalog_data(data)
    if problems:
        raise CatalogError(origin, problems)
    assert isinstance(data, dict)
    return data


def parse_catalog(text: str, origin: str = "<string>") -> Catalog:
    """Parse and validate catalog YAML text into the catalog's values.

    Args:
        text: The YAML document.
        origin: Name used in error messages (a path or resource name).

    Returns:
        The validated catalog.

    Raises:
        CatalogError: The YAML is malformed or does not match the schema; the error lists
            every problem.

    """
    return build_catalog(read_catalog_document(text, origin))
