r"""LogProfiles, how to read a log: built-in (NVCRE's verbatim, our ``nemo2-training``), or yours.

A profile holds a timestamp layout, a regex per event, the warm-up steps and log interval.

Invariants:
    * The built-in profiles go through the same validation as user profiles.
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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _EventPattern(_Strict):
    regex: str = Field(min_length=1)
    example: str | None = None
    units: dict[str, str] = Field(default_factory=dict)


class _Timestamp(_Strict):
    layout: str


class _WorkerStrategy(_Strict):
    type: Literal["Single", "Multi"] = "Single"
    lifecycle_pod: Literal["first", "last"] = Field("first", alias="lifecyclePod")
    training_step_pod: Literal["first", "last"] | None = Field(None, alias="trainingStepPod")
    replicated_job_name: str = Field("trainer", alias="replicatedJobName")


class _Spec(_Strict):
    timestamp: _Timestamp
    patterns: dict[PatternName, _EventPattern] = Field(default_factory=dict)
    worker_strategy: _WorkerStrategy = Field(
        default_factory=_WorkerStrategy, alias="workerStrategy"
    )
    container_name: str | None = Field(None, alias="containerName")
    warmup_steps: int = Field(0, ge=0, alias="warmupSteps")
    log_interval: int = Field(1, ge=1, alias="logInterval")


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
    """A validated LogProfile; ``origin`` is ``built-in`` or ``input``.

    ``workerStrategy.type``, ``lifecyclePod``, ``trainingStepPod`` and ``containerName`` are
    validated but not used: the report reads the logs it is given.
    """

    name: str
    origin: Literal["built-in", "input"]
    layout: GoLayout
    patterns: Mapping[str, CompiledPattern]
    warmup_steps: int
    log_interval: int
    replicated_job_name: str

    def pattern(self, key: str) -> CompiledPattern | None:
        """The compiled pattern ``key``, or ``None`` when the profile has none."""
        return self.patterns.get(key)


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
    return LogProfile(
        name=name,
        origin=origin,
        layout=layout,
        patterns={k: _compile_pattern(name, k, v) for k, v in parsed.patterns.items()},
        warmup_steps=parsed.warmup_steps,
        log_interval=parsed.log_interval,
        replicated_job_name=parsed.worker_strategy.replicated_job_name,
    )


# --- Built-in profiles: regexes verbatim from NVCRE (reference §1.9) ---------------------

NCCL_BANDWIDTH_REGEX = (
    r"^\s*(?P<size>\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)"
)
NCCL_BANDWIDTH_EXAMPLE = (
    "           8             2     float     sum      -1    58.31    0.00    0.00       0"
    "    58.40    0.00    0.00       0"
)
NETWORK_TRANSPORT_REGEX = r"NCCL INFO Using network (?P<transport>.+)"
_MEGATRON_TS = r"\[(?P<timestamp>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\]"
MEGATRON_TRAINING_STEP_REGEX = (
    _MEGATRON_TS + r"\s+iteration\s+(?P<iteration>\d+)/\s*\d+\s*\|"
    r".*elapsed time per iteration \(ms\):\s*(?P<elapsedTime>[\d.]+)\s*\|"
    r".*throughput per GPU \(TFLOP/s/GPU\):\s*(?P<tflops>[\d.]+)\s*\|"
    r".*lm loss:\s*(?P<loss>[\d.eE+\-]+)"
)
MEGATRON_BRIDGE_STEP_REGEX = (
    _MEGATRON_TS + r"\s+iteration\s+(?P<iteration>\d+)/\s*\d+\s*\|"
    r".*elapsed time per iteration \(ms\):\s*(?P<elapsedTime>[\d.]+)\s*\|"
    r"(?:.*throughput per GPU \(TFLOP/s/GPU\):\s*(?P<tflops>[\d.]+)\s*\|)?"
    r".*lm loss:\s*(?P<loss>[\d.eE+\-]+)"
)
MEGATRON_BRIDGE_STEP_EXAMPLE = (
    "[2026-04-10 05:07:38] iteration        2/      50 | consumed samples:        16384 | "
    "elapsed time per iteration (ms): 26333.1 | throughput per GPU (TFLOP/s/GPU): 194.2 | "
    "lm loss: 1.189539E+01"
)
NEMO2_STEP_REGEX = (
    r"Training epoch \d+, iteration (?P<iteration>\d+)/\d+ \|"
    r".*train_step_timing in s: (?P<elapsedTime>[\d.]+(?:e[+-]?\d+)?)"
)
NEMO2_STEP_EXAMPLE = (
    "Training epoch 0, iteration 97/99 | lr: 1.469e-05 | global_batch_size: 128 | "
    "global_step: 97 | reduced_train_loss: 6.265 | train_step_timing in s: 12.22"
)
_MEGATRON_COMMON: dict[str, dict[str, Any]] = {
    "checkpointSave": {
        "regex": _MEGATRON_TS
        + r"\s+saving checkpoint at iteration\s+(?P<step>\d+)\s+to\s+(?P<path>\S+)"
    },
    # The reference writes this timestamp group as "..."; it is the same group as above.
    "checkpointDone": {
        "regex": _MEGATRON_TS
        + r"\s+scheduled an async checkpoint save at iteration\s+(?P<step>\d+)\s+to\s+(?P<path>\S+)"
    },
    "checkpointRestore": {"regex": r"Loading checkpoint from (?P<path>\S+)"},
    "applicationStart": {
        "regex": r"using world size: \d+, data-parallel size: \d+, context-parallel size: \d+,"
        r".* tensor-model-parallel size: \d+, pipeline-model-parallel size: \d+"
    },
}
_MEGATRON_LAYOUT = "2006-01-02 15:04:05.999999"
_MEGATRON_STRATEGY = {"type": "Multi", "lifecyclePod": "first", "trainingStepPod": "last"}

_BUILTIN_SPECS: dict[str, dict[str, Any]] = {
    "nccl-bandwidth": {
        "timestamp": {"layout": "2006-01-02T15:04:05.999999999Z"},
        "workerStrategy": {"type": "Single", "replicatedJobName": "launcher"},
        "patterns": {
            "bandwidthResult": {"regex": NCCL_BANDWIDTH_REGEX, "example": NCCL_BANDWIDTH_EXAMPLE},
            "networkTransport": {"regex": NETWORK_TRANSPORT_REGEX},
        },
    },
    "nccl-loopback": {
        "timestamp": {"layout": "2006-01-02T15:04:05.999999999Z"},
        "workerStrategy": {"type": "Single", "replicatedJobName": "node"},
        "patterns": {
            "bandwidthResult": {"regex": NCCL_BANDWIDTH_REGEX, "example": NCCL_BANDWIDTH_EXAMPLE},
        },
    },
    "megatron-training": {
        "timestamp": {"layout": _MEGATRON_LAYOUT},
        "workerStrategy": _MEGATRON_STRATEGY,
        "warmupSteps": 10,
        "logInterval": 10,
        "patterns": {
            "trainingStep": {
                "regex": MEGATRON_TRAINING_STEP_REGEX,
                "units": {"elapsedTime": "ms"},
            },
            **_MEGATRON_COMMON,
        },
    },
    "megatron-bridge": {
        "timestamp": {"layout": _MEGATRON_LAYOUT},
        "workerStrategy": _MEGATRON_STRATEGY,
        "warmupSteps": 5,
        "logInterval": 1,
        "patterns": {
            "trainingStep": {
                "regex": MEGATRON_BRIDGE_STEP_REGEX,
                "example": MEGATRON_BRIDGE_STEP_EXAMPLE,
                "units": {"elapsedTime": "ms"},
            },
            **_MEGATRON_COMMON,
        },
    },
    # Ours: NVCRE has no profile for NeMo 2's "Training epoch E, iteration N/M |" lines.
    "nemo2-training": {
        "timestamp": {"layout": "2006-01-02 15:04:05"},
        "workerStrategy": _MEGATRON_STRATEGY,
        "warmupSteps": 5,
        "logInterval": 1,
        "patterns": {
            "trainingStep": {
                "regex": NEMO2_STEP_REGEX,
                "example": NEMO2_STEP_EXAMPLE,
                "units": {"elapsedTime": "s"},
            },
        },
    },
}

BUILTIN_PROFILES: Mapping[str, LogProfile] = {
    name: compile_profile(name, spec, "built-in") for name, spec in _BUILTIN_SPECS.items()
}
"""The built-in profiles by name: NVCRE's ``nccl-bandwidth``, ``nccl-loopback``,
``megatron-training`` and ``megatron-bridge``, and our ``nemo2-training``."""


def profiles_with_overrides(objects: Iterable[Mapping[str, Any]]) -> dict[str, LogProfile]:
    """The built-in profiles, replaced or extended by the LogProfile objects given.

    Raises:
        LogProfileError: an object has no name, is defined twice, or is invalid.

    """
    profiles = dict(BUILTIN_PROFILES)
    seen: set[str] = set()
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
        if name in seen:
            raise LogProfileError(f"LogProfile {name!r} is defined twice in the input")
        seen.add(name)
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            raise LogProfileError(f"LogProfile {name!r}: spec must be a mapping")
        profiles[name] = compile_profile(name, spec, "input")
    return profiles


def resolve_profile(
    ref: str, profiles: Mapping[str, LogProfile], *, needs: str | None = None
) -> LogProfile:
    """Look up a ``logProfileRef`` that must have the pattern ``needs`` (``LogProfileError``)."""
    profile = profiles.get(ref)
    if profile is None:
        known = ", ".join(sorted(profiles))
        raise LogProfileError(f"unknown logProfileRef {ref!r}; known LogProfiles: {known}")
    if needs is not None and profile.pattern(needs) is None:
        raise LogProfileError(f"LogProfile {ref!r} has no {needs} pattern")
    return profile
