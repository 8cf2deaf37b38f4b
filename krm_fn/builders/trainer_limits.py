"""Trainer's and the API server's hard limits, met by construction on the final objects.

* **128 items.** The TrainJob CRD caps ``spec.trainer.command`` and ``spec.trainer.args`` at
  128 items each (kubeflow/trainer v2.3.0 ``pkg/apis/trainer/v1alpha1/trainjob_types.go``
  253-265). Every variable forwarded to MPI ranks costs two items (``-x NAME=value``) and the
  ranks need them all (sshd starts them with a clean environment), so a long env cannot be
  made shorter. When either list would exceed 128 items, the launcher command becomes the
  form NVCRE already uses for ``preCommand``: ``/bin/bash -c "exec <argv, each element
  shell-quoted>"``, two command items and one argument, whatever the env. The argv mpirun
  receives is identical. The one script is then a single exec() argument, which Linux caps at
  :data:`MAX_ARG_STRLEN` bytes; beyond that the render fails naming both numbers. (The
  runtime's launcher argv has no item limit but would move the command out of the TrainJob,
  where NVCRE's job template and its overrides expect it.)
* **Annotations** of one object total at most 256 KiB (apimachinery
  ``TotalAnnotationSizeLimitB``); **an object** at most 1.5 MiB (etcd's default
  ``--max-request-bytes``, which the API server's storage enforces).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from krm_fn.builders.launch import BASH_C
from krm_fn.keys import ANN_GROUP_NODES_GZIP as GROUP_NODES_GZIP

MAX_LIST_ITEMS = 128
MAX_ARG_STRLEN = 131072
"""Linux ``MAX_ARG_STRLEN`` (32 pages): the longest single argument exec() accepts."""
MAX_ANNOTATIONS_BYTES = 256 * 1024
MAX_OBJECT_BYTES = 1536 * 1024


def fit_trainer_argv(trainjob: dict[str, Any]) -> str | None:
    """Keep ``spec.trainer.command``/``args`` within 128 items each; an error if impossible.

    Changes ``trainjob`` in place only when a list is over the limit.
    """
    trainer = (trainjob.get("spec") or {}).get("trainer") or {}
    command = list(trainer.get("command") or [])
    args = list(trainer.get("args") or [])
    if len(command) <= MAX_LIST_ITEMS and len(args) <= MAX_LIST_ITEMS:
        return None
    text = "exec " + shlex.join([*command, *args])
    size = len(text.encode())
    if size > MAX_ARG_STRLEN:
        return (
            f"the trainer command line has {len(command)} + {len(args)} items, over the TrainJob "
            f"limit of {MAX_LIST_ITEMS} each, and as one bash -c script it is {size} bytes, over "
            f"Linux's {MAX_ARG_STRLEN}-byte limit for one argument (MAX_ARG_STRLEN); shorten "
            "spec.env values or mpiArgs"
        )
    trainer["command"] = list(BASH_C)
    trainer["args"] = [text]
    return None


def annotation_bytes(obj: Mapping[str, Any]) -> int:
    """What the API server counts against the annotation limit (keys plus values)."""
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    return sum(len(str(k)) + len(str(v)) for k, v in ann.items())


def object_bytes(obj: Mapping[str, Any]) -> int:
    """The object's size as compact JSON (what the API server stores)."""
    return len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())


def worth_measuring(objs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The objects whose exact size must be measured; the others are provably smaller.

    Serialising every TrainJob of a 10,000-node run costs a noticeable share of the render,
    and the TrainJobs of a run differ only in their names, labels, annotations and node lists
    (overrides apply to all of them alike). So the first TrainJob is measured, and another one
    only when its annotations (which hold its node list and are counted exactly) and node
    count could make it larger than the limit: its node list appears at most three times
    (the annotation and two runtimePatches), each name with at most six more bytes of JSON.
    Everything that is not a TrainJob is measured.
    """
    out: list[Mapping[str, Any]] = []
    first: tuple[int, int, int] | None = None
    for o in objs:
        if o.get("kind") != "TrainJob":
            out.append(o)
            continue
        ann = annotation_bytes(o)
        if GROUP_NODES_GZIP in ((o.get("metadata") or {}).get("annotations") or {}):
            out.append(o)  # its node list is not in the annotation bytes: measure it
            continue
        nodes = int(((o.get("spec") or {}).get("trainer") or {}).get("numNodes") or 0)
        if first is None:
            first = (object_bytes(o), ann, nodes)
            out.append(o)
            continue
        size0, ann0, nodes0 = first
        bound = size0 + 3 * max(0, ann - ann0) + 6 * max(0, nodes - nodes0) + SLACK
        if bound > MAX_OBJECT_BYTES or ann > MAX_ANNOTATIONS_BYTES:
            out.append(o)
    return out


SLACK = 16 * 1024
"""Room for what else differs between two TrainJobs of a run (names, labels, wave fields)."""


def size_problems(obj: Mapping[str, Any]) -> list[str]:
    """The size limits ``obj`` breaks, each naming the limit and the number."""
    out = []
    ann = annotation_bytes(obj)
    if ann > MAX_ANNOTATIONS_BYTES:
        out.append(
            f"metadata.annotations total {ann} bytes, over the API server's limit of "
            f"{MAX_ANNOTATIONS_BYTES} bytes (256 KiB)"
        )
    size = object_bytes(obj)
    if size > MAX_OBJECT_BYTES:
        out.append(
            f"the object is {size} bytes as JSON, over the API server's storage limit of "
            f"{MAX_OBJECT_BYTES} bytes (1.5 MiB, etcd --max-request-bytes)"
        )
    return out
