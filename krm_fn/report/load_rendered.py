"""Read the groups: from the rendered objects (TrainJobs, LogProfiles), or from the logs alone.

The input is a YAML stream, a ``ResourceList`` or a ``List``. TrainJobs carry the group facts
in labels and annotations; ``LogProfile`` objects add or replace profiles by name; every other
object is ignored.

Invariants:
    * Every problem in the input is an :class:`RenderedInputError` naming the object and the
      field: malformed YAML, no TrainJob, bad annotation JSON, an unknown threshold key or
      ``logProfileRef``, a threshold that does not parse, an invalid LogProfile.
    * Nothing is defaulted silently except what is documented: a measurement annotation
      without ``logProfileRef`` uses ``nccl-bandwidth`` / ``megatron-training``.
    * Group order is the input order of the TrainJobs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from krm_fn.keys import (
    ANN_BANDWIDTH,
    ANN_FRAMEWORK,
    ANN_GOODPUT,
    ANN_GPU_ARCH,
    ANN_GROUP_NODES,
    ANN_PLATFORM,
    ANN_THRESHOLDS,
    LABEL_GROUP,
    LABEL_RUN,
)
from krm_fn.report.logprofiles import (
    LogProfile,
    LogProfileError,
    profiles_with_overrides,
    resolve_profile,
)
from krm_fn.thresholds import (
    Threshold,
    ThresholdKeyError,
    ThresholdSyntaxError,
    parse_thresholds,
)

_DURATION_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = rf"(\d+(?:\.\d+)?)({'|'.join(_DURATION_S)})"  # 'ms' before 'm' and 's'
_DURATION_RE = re.compile(f"^(?:{_DURATION_PART})+$")
_TEST_TYPE_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class RenderedInputError(ValueError):
    """The rendered input cannot be used; the message names the object and field."""


@dataclass(frozen=True)
class Measurement:
    """A measurement annotation: profile (``defaulted``: named none), testType, sampleInterval."""

    profile: LogProfile
    defaulted: bool = False
    test_type: str | None = None
    sample_interval: str | None = None

    @property
    def sample_interval_s(self) -> float | None:
        """``sampleInterval`` in seconds (a Go duration such as ``1m30s``), when set."""
        if self.sample_interval is None:
            return None
        parts = re.findall(_DURATION_PART, self.sample_interval)
        return sum(float(n) * _DURATION_S[u] for n, u in parts)


@dataclass(frozen=True)
class GroupSpec:
    """One node group as its TrainJob describes it (docs/report.md lists the fields read)."""

    trainjob: str
    namespace: str
    run: str
    group: str
    overflow: bool = False
    nodes: tuple[str, ...] | None = None  # None under placement Unpinned
    num_nodes: int | None = None
    num_proc_per_node: int | str | None = None
    platform: str | None = None
    gpu: str | None = None
    framework: str | None = None
    thresholds: Mapping[str, Threshold] = field(default_factory=dict)
    bandwidth: Measurement | None = None
    goodput: Measurement | None = None
    from_log: bool = False  # one log read alone: its size is what it states (no coverage check)


@dataclass(frozen=True)
class Rendered:
    """The groups in input order, the profiles by name, by kind the ``--log-profile`` to use."""

    groups: tuple[GroupSpec, ...]
    profiles: Mapping[str, LogProfile]
    read_with: Mapping[str, LogProfile] = field(default_factory=dict)


def _documents(text: str) -> Iterator[Mapping[str, Any]]:
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as err:
        raise RenderedInputError(f"input is not valid YAML: {err}") from None
    for index, document in enumerate(documents):
        if document is None:
            continue
        if not isinstance(document, Mapping):
            raise RenderedInputError(
                f"document {index + 1} is a {type(document).__name__}, not a Kubernetes object"
            )
        kind = document.get("kind")
        if kind in ("ResourceList", "List") and "items" in document:
            items = document.get("items") or []
            if not isinstance(items, list):
                raise RenderedInputError(f"document {index + 1}: {kind}.items must be a list")
            for position, item in enumerate(items):
                if not isinstance(item, Mapping):
                    raise RenderedInputError(
                        f"document {index + 1}: {kind}.items[{position}] is not an object"
                    )
                yield item
        else:
            yield document


def _json_annotation(name: str, annotations: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    raw = annotations.get(key)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise RenderedInputError(f"TrainJob {name!r}: annotation {key} must be a string")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as err:
        raise RenderedInputError(
            f"TrainJob {name!r}: annotation {key} is not JSON: {err}"
        ) from None
    if not isinstance(value, dict):
        raise RenderedInputError(f"TrainJob {name!r}: annotation {key} must be a JSON object")
    return value


_MEASUREMENTS = {
    ANN_BANDWIDTH: ("testType", "nccl-bandwidth", "bandwidthResult", _TEST_TYPE_RE,
                    "a collective name such as all_reduce"),
    ANN_GOODPUT: ("sampleInterval", "megatron-training", "trainingStep", _DURATION_RE,
                  "a duration such as 60s"),
}  # fmt: skip
"""The field a measurement annotation has besides ``logProfileRef``, the default profile,
the pattern the profile needs, and what the field's value must be."""


def _measurement(
    name: str, annotations: Mapping[str, Any], key: str, profiles: Mapping[str, LogProfile]
) -> Measurement | None:
    value = _json_annotation(name, annotations, key)
    if value is None:
        return None
    where = f"TrainJob {name!r}: annotation {key}"
    own, default, needs, pattern, allowed = _MEASUREMENTS[key]
    if unknown := sorted(set(value) - {own, "logProfileRef"}):
        raise RenderedInputError(
            f"{where} has unknown field(s) {', '.join(unknown)}; allowed: {own}, logProfileRef"
        )
    ref = value.get("logProfileRef", default)
    if not isinstance(ref, str) or not ref:
        raise RenderedInputError(f"{where}: logProfileRef must be a string")
    try:
        profile = resolve_profile(ref, profiles, needs=needs)
    except LogProfileError as err:
        raise RenderedInputError(f"{where}: {err}") from None
    field = value.get(own)
    if field is not None and (not isinstance(field, str) or not pattern.match(field)):
        raise RenderedInputError(f"{where}: {own} {field!r} must be {allowed}")
    test_type, interval = (field, None) if own == "testType" else (None, field)
    return Measurement(profile, "logProfileRef" not in value, test_type, interval)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _group(obj: Mapping[str, Any], profiles: Mapping[str, LogProfile]) -> GroupSpec:
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
        raise RenderedInputError("a TrainJob has no metadata.name")
    name: str = metadata["name"]
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    if not isinstance(labels, Mapping) or not isinstance(annotations, Mapping):
        raise RenderedInputError(f"TrainJob {name!r}: labels and annotations must be mappings")
    group = str(labels.get(LABEL_GROUP) or name)
    text = annotations.get(ANN_GROUP_NODES)
    nodes = None if text is None else tuple(n.strip() for n in str(text).split(",") if n.strip())
    spec = obj.get("spec")
    trainer = spec.get("trainer") if isinstance(spec, Mapping) else None
    trainer = trainer if isinstance(trainer, Mapping) else {}
    try:
        thresholds = parse_thresholds(_json_annotation(name, annotations, ANN_THRESHOLDS) or {})
    except (ThresholdKeyError, ThresholdSyntaxError) as err:
        raise RenderedInputError(f"TrainJob {name!r}: annotation {ANN_THRESHOLDS}: {err}") from None
    num_proc = trainer.get("numProcPerNode")
    return GroupSpec(
        trainjob=name,
        namespace=str(metadata.get("namespace") or "default"),
        run=str(labels.get(LABEL_RUN) or name),
        group=group,
        overflow=name.endswith("-overflow") or group.endswith("-overflow"),
        nodes=nodes,
        num_nodes=_int_or_none(trainer.get("numNodes")),
        num_proc_per_node=num_proc if isinstance(num_proc, int | str) else None,
        platform=_str_or_none(annotations.get(ANN_PLATFORM)),
        gpu=_str_or_none(annotations.get(ANN_GPU_ARCH)),
        framework=_str_or_none(annotations.get(ANN_FRAMEWORK)),
        thresholds=thresholds,
        bandwidth=_measurement(name, annotations, ANN_BANDWIDTH, profiles),
        goodput=_measurement(name, annotations, ANN_GOODPUT, profiles),
    )


def _str_or_none(value: Any) -> str | None:
    return str(value) if value is not None and str(value) else None


def load_rendered(text: str, extra: Mapping[str, LogProfile] | None = None) -> Rendered:
    """Read the rendered objects, ``extra`` profiles over theirs (else ``RenderedInputError``)."""
    objects = list(_documents(text))
    profile_objects = [o for o in objects if o.get("kind") == "LogProfile"]
    try:
        profiles = {**profiles_with_overrides(profile_objects), **(extra or {})}
    except LogProfileError as err:
        raise RenderedInputError(str(err)) from None
    trainjobs = [
        o
        for o in objects
        if o.get("kind") == "TrainJob"
        and str(o.get("apiVersion", "")).startswith("trainer.kubeflow.org/")
    ]
    if not trainjobs:
        raise RenderedInputError(
            "no TrainJob (trainer.kubeflow.org) objects in the input: pass the objects the "
            "render wrote"
        )
    groups = tuple(_group(o, profiles) for o in trainjobs)
    seen: set[str] = set()
    for group in groups:
        if group.trainjob in seen:
            raise RenderedInputError(
                f"TrainJob {group.trainjob!r} appears twice in the input (logs are matched by "
                "TrainJob name, so names must be unique)"
            )
        seen.add(group.trainjob)
    return Rendered(groups, profiles)


def load_profiles(text: str) -> tuple[dict[str, LogProfile], list[LogProfile]]:
    """A ``--log-profile`` file's profiles over the built-in ones, and its own in order (≥ 1)."""
    objects = [o for o in _documents(text) if o.get("kind") == "LogProfile"]
    if not objects:
        raise RenderedInputError("the file holds no LogProfile (kind: LogProfile) object")
    try:
        profiles = profiles_with_overrides(objects)
    except LogProfileError as err:
        raise RenderedInputError(str(err)) from None
    return profiles, [profiles[str(o["metadata"]["name"])] for o in objects]


def groups_from_logs(
    names: Iterable[str], profiles: Mapping[str, LogProfile], chosen: Sequence[LogProfile] = ()
) -> Rendered:
    """One group per log (run ``logs``), read by the first ``chosen`` profile with its pattern."""
    read_with = {
        kind: profile
        for kind, pattern in (("bandwidth", "bandwidthResult"), ("training", "trainingStep"))
        if (profile := next((p for p in chosen if p.patterns.get(pattern)), None)) is not None
    }
    groups = tuple(
        GroupSpec(trainjob=name, namespace="default", run="logs", group=name, from_log=True)
        for name in names
    )
    return Rendered(groups, profiles, read_with)
