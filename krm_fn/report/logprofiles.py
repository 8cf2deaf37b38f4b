r"""LogProfiles, how to read a log: built-in (NVCRE's verbatim, our ``nemo2-training``), or yours.

A profile holds a timestamp layout, a regex per event, the warm-up steps and log interval.

Invariants:
    * The built-in profiles are LogProfile objects (``krm_fn/data/logprofiles.yaml``), read
      and validated as a user's are.
    * Regexes are the Go (RE2) text, translated only where Python spells the same thing
      differently (``(?<name>`` → ``(?P<name>``, ``\z`` → ``\Z``); a regex that does not
      compile, lacks a required named group, or does not match its own ``example`` is an error.
    * A profile from the input replaces the built-in profile of the same name; an unknown
      ``logProfileRef`` is an error listing the names that exist.
    * Unknown fields are errors (a typo in a profile must not silently disable a pattern).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from krm_fn.report.timestamps import GoLayout, LayoutError

LOGPROFILE_API_VERSION = "nvcre.nvidia.com/v1alpha1"

PatternName = Literal[
    "trainingStep", "checkpointSave", "checkpointDone", "checkpointRestore", "checkpointLoaded",
    "applicationStart", "warmupStep", "bandwidthResult", "networkTransport",
]  # fmt: skip
_REQUIRED_GROUPS: dict[str, tuple[str, ...]] = {
    "bandwidthResult": ("size", "busBW"),
    "trainingStep": ("iteration", "elapsedTime"),
    "networkTransport": ("transport",),
}
"""Named groups a pattern must have to be usable."""
_UNITS: dict[str, dict[str, dict[str, float]]] = {
    "trainingStep": {"elapsedTime": {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0}},
    "bandwidthResult": {
        "size": {"B": 1.0},
        "algBW": {"GB/s": 1.0, "GBps": 1.0},
        "busBW": {"GB/s": 1.0, "GBps": 1.0},
    },
}
"""Units a group may declare, with the factor to the report's unit (ms, bytes, GB/s).
nccl-tests prints bytes and GB/s only, and its rows are checked against the columns."""


class LogProfileError(ValueError):
    """A LogProfile is invalid, or a ``logProfileRef`` names no profile."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel)


class _EventPattern(_Strict):
    regex: str = Field(min_length=1)
    example: str | None = None
    units: dict[str, str] = Field(default_factory=dict)


class _Timestamp(_Strict):
    layout: str


class _WorkerStrategy(_Strict):
    type: Literal["Single", "Multi"] = "Single"
    lifecycle_pod: Literal["first", "last"] = "first"
    training_step_pod: Literal["first", "last"] | None = None
    replicated_job_name: str = "trainer"


class _Spec(_Strict):
    # The report reads the logs it is given: workerStrategy (but for replicatedJobName) and
    # containerName are validated and not used.
    timestamp: _Timestamp
    patterns: dict[PatternName, _EventPattern] = Field(default_factory=dict)
    worker_strategy: _WorkerStrategy = Field(default_factory=_WorkerStrategy)
    container_name: str | None = None
    warmup_steps: int = Field(0, ge=0)
    log_interval: int = Field(1, ge=1)


@dataclass(frozen=True)
class CompiledPattern:
    """One event pattern (e.g. ``bandwidthResult``): the Go text, compiled, with its units."""

    name: str
    regex: str
    pattern: re.Pattern[str]
    units: Mapping[str, str] = field(default_factory=dict)

    def scale(self, group: str) -> float:
        """The factor turning the group's value into the report's unit (ms, GB/s, bytes)."""
        unit = self.units.get(group)
        return 1.0 if unit is None else _UNITS[self.name][group][unit]


@dataclass(frozen=True)
class LogProfile:
    """A validated LogProfile: its spec as written and compiled; ``origin``: built-in or input."""

    name: str
    origin: Literal["built-in", "input"]
    spec: _Spec
    layout: GoLayout
    patterns: Mapping[str, CompiledPattern]


def translate_go_regex(regex: str) -> str:
    r"""Rewrite the Go RE2 syntax Python spells differently (``(?<name>``, ``\z``)."""
    text = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", regex)
    return re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", text)


def _compile_pattern(profile: str, key: str, spec: _EventPattern) -> CompiledPattern:
    where = f"LogProfile {profile!r} pattern {key}"
    try:
        compiled = re.compile(translate_go_regex(spec.regex))
    except re.error as err:
        raise LogProfileError(f"{where}: regex does not compile: {err}") from None
    missing = [g for g in _REQUIRED_GROUPS.get(key, ()) if g not in compiled.groupindex]
    if missing:
        raise LogProfileError(
            f"{where}: regex lacks the named group(s) {', '.join(missing)} "
            f"(write them as (?P<name>...))"
        )
    for group, unit in spec.units.items():
        if group not in compiled.groupindex:
            raise LogProfileError(f"{where}: units names {group!r}, which is not a group")
        allowed = _UNITS.get(key, {}).get(group)
        if allowed is None or unit not in allowed:
            choices = ", ".join(allowed) if allowed else "none (group takes no unit)"
            raise LogProfileError(f"{where}: unit {unit!r} for {group} not supported: {choices}")
    if spec.example is not None and compiled.search(spec.example) is None:
        raise LogProfileError(f"{where}: regex does not match its own example {spec.example!r}")
    return CompiledPattern(key, spec.regex, compiled, dict(spec.units))


def compile_profile(
    name: str, spec: Mapping[str, Any], origin: Literal["built-in", "input"]
) -> LogProfile:
    """Validate and compile one LogProfile ``spec`` (``LogProfileError`` names the field)."""
    try:
        parsed = _Spec.model_validate(spec)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'spec'}: {e['msg']}" for e in err.errors()
        )
        raise LogProfileError(f"LogProfile {name!r}: {problems}") from None
    try:
        layout = GoLayout.compile(parsed.timestamp.layout)
    except LayoutError as err:
        raise LogProfileError(f"LogProfile {name!r}: {err}") from None
    compiled: dict[str, CompiledPattern] = {
        key: _compile_pattern(name, key, pattern) for key, pattern in parsed.patterns.items()
    }
    return LogProfile(name, origin, parsed, layout, compiled)


def _compile_objects(
    objects: Iterable[Mapping[str, Any]], origin: Literal["built-in", "input"]
) -> dict[str, LogProfile]:
    """LogProfile objects by name (``LogProfileError``: no name, defined twice, or invalid)."""
    profiles: dict[str, LogProfile] = {}
    for obj in objects:
        metadata = obj.get("metadata")
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        if not isinstance(name, str) or not name:
            raise LogProfileError("a LogProfile object has no metadata.name")
        if obj.get("apiVersion") != LOGPROFILE_API_VERSION:
            raise LogProfileError(
                f"LogProfile {name!r}: apiVersion must be {LOGPROFILE_API_VERSION}, "
                f"got {obj.get('apiVersion')!r}"
            )
        if name in profiles:
            raise LogProfileError(f"LogProfile {name!r} is defined twice in the input")
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            raise LogProfileError(f"LogProfile {name!r}: spec must be a mapping")
        profiles[name] = compile_profile(name, spec, origin)
    return profiles


_BUILTIN_FILE = Path(__file__).parents[1] / "data" / "logprofiles.yaml"
BUILTIN_PROFILES: Mapping[str, LogProfile] = _compile_objects(
    yaml.load(_BUILTIN_FILE.read_text("utf-8"), getattr(yaml, "CSafeLoader", yaml.SafeLoader))[
        "items"
    ],
    "built-in",
)
"""The built-in profiles by name (``krm_fn/data/logprofiles.yaml``): NVCRE's
``nccl-bandwidth``, ``nccl-loopback``, ``megatron-training`` and ``megatron-bridge``, and our
``nemo2-training``."""


def profiles_with_overrides(objects: Iterable[Mapping[str, Any]]) -> dict[str, LogProfile]:
    """The built-in profiles, replaced or extended by the LogProfile objects given."""
    return {**BUILTIN_PROFILES, **_compile_objects(objects, "input")}


def resolve_profile(
    ref: str, profiles: Mapping[str, LogProfile], *, needs: str | None = None
) -> LogProfile:
    """Look up a ``logProfileRef`` that must have the pattern ``needs`` (``LogProfileError``)."""
    profile = profiles.get(ref)
    if profile is None:
        known = ", ".join(sorted(profiles))
        raise LogProfileError(f"unknown logProfileRef {ref!r}; known LogProfiles: {known}")
    if needs is not None and profile.patterns.get(needs) is None:
        raise LogProfileError(f"LogProfile {ref!r} has no {needs} pattern")
    return profile
