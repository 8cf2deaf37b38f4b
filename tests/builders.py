"""The one place the tests build their inputs: Nodes, WorkloadRuns, ResourceLists, options.

Every test (and ``tests/golden/make_inputs.py``, which writes the golden inputs with them)
imports these instead of writing its own dicts, so an input shape changes in one place:

* ``node`` / ``nodes``: a GPU Node as GPU Feature Discovery labels it (Ready, 8 GPUs, an AWS
  providerID); every part can be changed or left out.
* ``wr``: a WorkloadRun, annotated as read from ``workloadrun.yaml`` unless ``path=None``.
* ``rl``: a ``ResourceList`` with optional ``functionConfig``; ``cm``: that ConfigMap.
* ``runtime_spec``: the ``replicatedJobs`` nesting of a TrainingRuntime's spec (also a
  runtimePatch's ``trainingRuntimeSpec``) around one replicated job's pod spec.
* ``bench_generator`` / ``bench_inventory``: realistic fleets as the benchmark writes them
  (``bench/make_inventory.py``), as objects or as the text of a ResourceList.
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path
from types import ModuleType
from typing import Any

IMAGE = "nvcr.io/nvidia/pytorch:26.01-py3"
MPI = {
    "mpirunPath": "/usr/local/mpi/bin/mpirun",
    "binary": "/usr/local/bin/all_reduce_perf_mpi",
    "args": ["-b", "8", "-e", "32G", "-f", "2", "-n", "100"],
}


def node(
    name: str,
    *,
    product: str = "NVIDIA-H100-80GB-HBM3",
    provider: str | None = "aws:///us-east-1a/i-0",
    labels: dict[str, str] | None = None,
    ready: bool | None = True,
    cordoned: bool = False,
    taints: list[dict[str, str]] | None = None,
    gpus: int = 8,
) -> dict[str, Any]:
    """A GPU Node named ``name``.

    ``provider`` is the providerID's prefix (the name's last two characters complete it);
    ``""`` leaves the providerID out of an empty ``spec``, ``None`` leaves ``spec`` out
    altogether (unless cordoned or tainted). ``ready=None`` reports no conditions at all.
    """
    lab = {"kubernetes.io/hostname": name, "nvidia.com/gpu.present": "true"}
    if product:
        lab["nvidia.com/gpu.product"] = product
    lab.update(labels or {})
    spec: dict[str, Any] = {"providerID": provider + name[-2:]} if provider else {}
    if cordoned:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    status: dict[str, Any] = {"allocatable": {"nvidia.com/gpu": str(gpus)}}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": lab},
    }
    if spec or provider is not None:
        out["spec"] = spec
    out["status"] = status
    return out


def nodes(n: int, prefix: str = "gpu-node-", **kw: Any) -> list[dict[str, Any]]:
    """``n`` Nodes named ``{prefix}01`` onwards (``node``'s keywords apply to each)."""
    return [node(f"{prefix}{i:02d}", **kw) for i in range(1, n + 1)]


def wr(
    name: str, spec: dict[str, Any], ns: str | None = None, path: str | None = "workloadrun.yaml"
) -> dict[str, Any]:
    """A WorkloadRun; kpt's path annotations name ``path`` (none when ``path`` is None)."""
    meta: dict[str, Any] = {"name": name}
    if ns:
        meta["namespace"] = ns
    if path:
        meta["annotations"] = {
            "internal.config.kubernetes.io/path": path,
            "internal.config.kubernetes.io/index": "0",
        }
    return {
        "apiVersion": "nvcre.nvidia.com/v1alpha1",
        "kind": "WorkloadRun",
        "metadata": meta,
        "spec": spec,
    }


def rl(items: list[dict[str, Any]], fc: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ResourceList of ``items``, with ``fc`` as its functionConfig when given."""
    out: dict[str, Any] = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": items,
    }
    if fc:
        out["functionConfig"] = fc
    return out


def cm(**data: str) -> dict[str, Any]:
    """The function's options ConfigMap (``function-input``) holding ``data``."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "function-input"},
        "data": data,
    }


def runtime_spec(job: str, pod: dict[str, Any]) -> dict[str, Any]:
    """A TrainingRuntime spec (or a runtimePatch's trainingRuntimeSpec) with one replicated
    job ``job`` whose pod spec is ``pod``."""
    rj = {"name": job, "template": {"spec": {"template": {"spec": pod}}}}
    return {"template": {"spec": {"replicatedJobs": [rj]}}}


def bench_generator() -> ModuleType:
    """``bench/make_inventory.py`` (not a package), loaded afresh from the checkout."""
    path = Path(__file__).resolve().parents[1] / "bench" / "make_inventory.py"
    spec = importlib.util.spec_from_file_location("make_inventory", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_inventory(count: int, seed: int, *, as_list: bool) -> str:
    """The benchmark's ResourceList text: its WorkloadRun and ``count`` AWS GPU Nodes
    (generated with ``seed``), as separate items or inside one ``v1 List`` item."""
    out = io.StringIO()
    bench_generator().write(out, count, seed, "aws", True, True, as_list)
    return out.getvalue()
