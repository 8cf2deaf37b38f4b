"""Every platform catalog entry rendered end to end, the offline preview, and the docs table.

For each entry of ``krm_fn/data/platforms.yaml`` a realistic inventory is synthesised that
makes the entry match (providerID, GPU product, shape and topology labels, allocatable
resources), and three WorkloadRuns are rendered through ``run_krm``: an MPI nccl-tests job on
2 and on 4 nodes and a torch job on 2 nodes (a framework the entry excludes is skipped, and
the test id says so). Each case is compared with ``tests/golden_catalog/<entry>/<case>.yaml``,
validated against the pinned CRDs, checked against an independent reading of the catalog (which
entries match, what each one sets, merge order) and run again on its own output.

Regenerate the goldens and the table in the README's Platforms and GPUs section with
``pytest tests/test_catalog_render.py --update-golden`` (or ``UPDATE_GOLDEN=1``).
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.entry.run import RunOutcome, run_krm
from krm_fn.io.output import is_generated
from krm_fn.platforms.catalog import Catalog, CatalogEntry, load_catalog
from krm_fn.platforms.detect import PLATFORMS
from krm_fn.platforms.gpu import GPU_ARCHITECTURES
from tests.builders import IMAGE, wr
from tests.k8s_schemas import shared_dir, validate_all

sys.path.insert(0, str(shared_dir() / "tools"))
# the shared acceptance gate (../shared/tools/README.md); without ../shared the module skips
trainer_sim = pytest.importorskip("trainer_sim")

REPO = Path(__file__).resolve().parents[1]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
GOLDEN = Path(__file__).parent / "golden_catalog"
DOCS = REPO / "docs" / "platforms.md"
TABLE_START = "<!-- catalog-table:start -->"
TABLE_END = "<!-- catalog-table:end -->"

CATALOG: Catalog = load_catalog()
ENTRIES: dict[str, CatalogEntry] = {e.name: e for e in CATALOG.entries}

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
GPU_PRODUCT = "nvidia.com/gpu.product"
ANN_APPLIED = "nvcre.nvidia.com/applied-overrides"
ANN_PLATFORM = "nvcre.nvidia.com/detected-platform"
ANN_ARCH = "nvcre.nvidia.com/detected-gpu-architecture"

MPIRUN = "/usr/local/mpi/bin/mpirun"
NCCL_BINARY = "/usr/local/bin/all_reduce_perf_mpi"
NCCL_ARGS = ["-b", "8", "-e", "16G", "-f", "2", "-g", "1"]
TORCH_SCRIPT = "/workspace/train.py"
TORCH_ARGS = ["--steps", "200"]
MPI_BASE_CAPS = ("IPC_LOCK", "SYS_CHROOT")

# --------------------------------------------------------------------------- inventories

# GPU Feature Discovery `nvidia.com/gpu.product` values, one per architecture.
PRODUCTS = {
    "a100": "NVIDIA-A100-SXM4-80GB",
    "b200": "NVIDIA-B200",
    "b300": "NVIDIA-B300-SXM6-AC",
    "gb200": "NVIDIA-GB200",
    "gb300": "NVIDIA-GB300",
    "h100": "NVIDIA-H100-80GB-HBM3",
    "h200": "NVIDIA-H200",
    "l40": "NVIDIA-L40",
    "l40s": "NVIDIA-L40S",
    "rtxpro6000": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
}
DEFAULT_ARCH = "h100"  # for entries without a gpuArchitecture condition
DEFAULT_PLATFORM = "onprem"  # for entries without a platform condition

# The shape labels real nodes of each (platform, GPU) carry. An entry's own instanceTypes /
# gkeAccelerator condition replaces these; a pair missing here takes the value of a matching
# `defaultShape` entry, else the label is left off (what a hand-written inventory does).
SHAPES: dict[tuple[str, str], dict[str, str]] = {
    ("aws", "a100"): {INSTANCE_TYPE: "p4d.24xlarge"},
    ("aws", "h100"): {INSTANCE_TYPE: "p5.48xlarge"},
    ("aws", "h200"): {INSTANCE_TYPE: "p5e.48xlarge"},
    ("aws", "b200"): {INSTANCE_TYPE: "p6-b200.48xlarge"},
    ("aws", "gb200"): {INSTANCE_TYPE: "p6e-gb200.36xlarge"},
    ("aws", "gb300"): {INSTANCE_TYPE: "p6e-gb300.36xlarge"},
    ("gcp", "h100"): {INSTANCE_TYPE: "a3-megagpu-8g", GKE_ACCELERATOR: "nvidia-h100-mega-80gb"},
    ("gcp", "h200"): {INSTANCE_TYPE: "a3-ultragpu-8g", GKE_ACCELERATOR: "nvidia-h200-141gb"},
    ("gcp", "b200"): {INSTANCE_TYPE: "a4-highgpu-8g", GKE_ACCELERATOR: "nvidia-b200"},
    ("gcp", "gb200"): {INSTANCE_TYPE: "a4x-highgpu-4g", GKE_ACCELERATOR: "nvidia-gb200"},
    ("gcp", "gb300"): {INSTANCE_TYPE: "a4x-maxgpu-4g", GKE_ACCELERATOR: "nvidia-gb300"},
    ("gcp", "rtxpro6000"): {
        INSTANCE_TYPE: "g4-standard-384",
        GKE_ACCELERATOR: "nvidia-rtx-pro-6000",
    },
    ("azure", "h100"): {INSTANCE_TYPE: "Standard_ND96isr_H100_v5"},
    ("azure", "h200"): {INSTANCE_TYPE: "Standard_ND96isr_H200_v5"},
    ("azure", "gb200"): {INSTANCE_TYPE: "Standard_ND128isr_NDR_GB200_v6"},
    ("azure", "gb300"): {INSTANCE_TYPE: "Standard_ND128isr_GB300_v6"},
    ("oci", "h100"): {INSTANCE_TYPE: "BM.GPU.H100.8"},
    ("oci", "h200"): {INSTANCE_TYPE: "BM.GPU.H200.8"},
    ("oci", "b200"): {INSTANCE_TYPE: "BM.GPU.B200.8"},
    ("oci", "b300"): {INSTANCE_TYPE: "BM.GPU.B300.8"},
    ("oci", "gb200"): {INSTANCE_TYPE: "BM.GPU.GB200.4"},
    ("oci", "gb300"): {INSTANCE_TYPE: "BM.GPU.GB300.4"},
}
# GKE machine type of each accelerator (a node carries both labels).
GKE_MACHINES = {
    "nvidia-h100-80gb": "a3-highgpu-8g",
    "nvidia-h100-mega-80gb": "a3-megagpu-8g",
    "nvidia-h200-141gb": "a3-ultragpu-8g",
    "nvidia-b200": "a4-highgpu-8g",
    "nvidia-gb200": "a4x-highgpu-4g",
    "nvidia-gb300": "a4x-maxgpu-4g",
    "nvidia-rtx-pro-6000": "g4-standard-384",
}
COREWEAVE_TYPES = {"h100": "gd-8xh100ib-i128", "b200": "b200-8x", "gb200": "gb200-4x"}
TOPOLOGY_VALUES = {
    "topology.k8s.aws/network-node-layer-1": "nn-1a2b3c4d5e6f7a8b9",
    "cloud.google.com/gce-topology-block": "c2a3f1b0e9d8a7b6",
    "kubernetes.azure.com/ppg": "ppg-gb300-westus3-01",
    "topology.kubernetes.io/zone": "US-EAST-04A",
}


def node_name(platform: str, i: int) -> str:
    return {
        "aws": f"ip-10-0-1-{10 + i}.ec2.internal",
        "gcp": f"gke-gpu-pool-8f3c2a1b-{i:04d}",
        "azure": f"aks-gpu-31415926-vmss{i:06d}",
        "oci": f"10.0.64.{10 + i}",
        "coreweave": f"g8a1b{i:02d}",
        "nscale": f"nscale-gpu-{i:02d}",
        "togetherai": f"worker-gpu-{i:02d}",
        "mistral": f"mistral-gb300-rack1-node{i:02d}",
        "forge": f"forge-dgx-{i:02d}",
    }.get(platform, f"dgx-{i:02d}")


# What follows each platform's providerID prefix, and the value of its detection label: the
# prefix and the label key are the table's (its first detection rule), so a node of the
# generator is a node of that platform by construction of the table, not of this file.
PROVIDER_TAILS = {
    "aws": lambda i, name: f"/us-east-1a/i-0{i:016x}",
    "gcp": lambda i, name: f"nvcre-gpu-project/us-central1-a/{name}",
    "azure": lambda i, name: (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
        "mc_gpu_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/"
        f"aks-gpu-31415926-vmss/virtualMachines/{i}"
    ),
    "oci": lambda i, name: f"instance.oc1.iad.anuwcljt{i:08d}",
    "nscale": lambda i, name: f"/6f1c2b3a-0000-4000-8000-{i:012d}",
    "togetherai": lambda i, name: f"tenant-gpu/{name}",
    "mistral": lambda i, name: f"metal3/{name}/{name}",
}
DETECTION_LABEL_VALUES = {
    "coreweave": lambda arch: COREWEAVE_TYPES.get(arch, "gpu"),
    "togetherai": lambda arch: "true",
    "forge": lambda arch: "forge-site-1",
}


def _first_rule(platform: str) -> Any:
    own = CATALOG.platform(platform)
    return own.detect[0] if own and own.detect else None


def provider_id(platform: str, i: int, name: str) -> str | None:
    rule = _first_rule(platform)
    if rule is None or not rule.provider_id:
        return None
    return rule.provider_id + PROVIDER_TAILS[platform](i, name)


def platform_labels(platform: str, arch: str) -> dict[str, str]:
    rule = _first_rule(platform)
    if rule is None or not rule.label:
        return {}
    return {rule.label: DETECTION_LABEL_VALUES[platform](arch)}


def target_of(entry: CatalogEntry) -> tuple[str, str]:
    """The (platform, architecture) an entry's cases run on: the first of each it names."""
    when = entry.when
    return (
        when.platform[0] if when.platform else DEFAULT_PLATFORM,
        when.gpu_architecture[0] if when.gpu_architecture else DEFAULT_ARCH,
    )


def _sibling_default_shape(platform: str, arch: str, attr: str) -> str | None:
    for other in CATALOG.entries:
        w = other.when
        values = getattr(w, attr)
        if (
            values
            and w.default_shape
            and (w.platform is None or platform in w.platform)
            and (w.gpu_architecture is None or arch in w.gpu_architecture)
        ):
            return str(values[0])
    return None


def shape_labels(entry: CatalogEntry, platform: str, arch: str) -> dict[str, str]:
    labels = dict(SHAPES.get((platform, arch), {}))
    for attr, key in (("instance_types", INSTANCE_TYPE), ("gke_accelerator", GKE_ACCELERATOR)):
        own = getattr(entry.when, attr)
        if own:
            labels[key] = own[0]
        elif key not in labels:
            sibling = _sibling_default_shape(platform, arch, attr)
            if sibling:
                labels[key] = sibling
    machine = GKE_MACHINES.get(labels.get(GKE_ACCELERATOR, ""))
    if machine and not entry.when.instance_types:
        labels[INSTANCE_TYPE] = machine
    return labels


def make_nodes(
    platform: str,
    arch: str,
    count: int,
    *,
    shape: Mapping[str, str] | None = None,
    gpus: int = 8,
    extra_allocatable: Mapping[str, str] | None = None,
    extra_labels: Mapping[str, str] | None = None,
    first: int = 1,
) -> list[dict[str, Any]]:
    """Realistic Ready GPU nodes of one platform and architecture."""
    nodes = []
    for i in range(first, first + count):
        name = node_name(platform, i)
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "arm64" if arch.startswith("gb") else "amd64",
            "nvidia.com/gpu.present": "true",
            GPU_PRODUCT: PRODUCTS[arch],
            "nvidia.com/gpu.count": str(gpus),
            **platform_labels(platform, arch),
            **(shape or {}),
            **(extra_labels or {}),
        }
        allocatable = {
            "cpu": "190",
            "memory": "2000Gi",
            "pods": "250",
            "nvidia.com/gpu": str(gpus),
            **(extra_allocatable or {}),
        }
        rule = _first_rule(platform)
        if rule is not None and rule.allocatable:  # e.g. Nscale's RDMA share
            allocatable[rule.allocatable] = "1k"
        node: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {},
            "status": {
                "capacity": dict(allocatable),
                "allocatable": allocatable,
                "conditions": [
                    {
                        "type": "MemoryPressure",
                        "status": "False",
                        "reason": "KubeletHasSufficientMemory",
                    },
                    {"type": "Ready", "status": "True", "reason": "KubeletReady"},
                ],
            },
        }
        pid = provider_id(platform, i, name)
        if pid:
            node["spec"]["providerID"] = pid
        nodes.append(node)
    return nodes


# --------------------------------------------------------------------------- the oracle
# An independent reading of the catalog's documented semantics (README, Platforms and GPUs), used to
# check the render: which entries match, and what their merge gives.


def _listed(allowed: Sequence[str] | None, value: str) -> bool:
    return allowed is None or value in allowed


def _shape_ok(allowed: Sequence[str] | None, actual: set[str], default: bool) -> bool:
    if allowed is None:
        return True
    if not actual:
        return default
    return actual <= set(allowed)


def oracle_entries(
    platform: str, arch: str, framework: str, nodes: Iterable[Mapping[str, Any]] = ()
) -> list[CatalogEntry]:
    labels = [n["metadata"]["labels"] for n in nodes]
    types = {lab[INSTANCE_TYPE] for lab in labels if lab.get(INSTANCE_TYPE)}
    accelerators = {lab[GKE_ACCELERATOR] for lab in labels if lab.get(GKE_ACCELERATOR)}
    return [
        e
        for e in CATALOG.entries
        if _listed(e.when.platform, platform)
        and _listed(e.when.gpu_architecture, arch)
        and _listed(e.when.frameworks, framework)
        and _shape_ok(e.when.instance_types, types, e.when.default_shape)
        and _shape_ok(e.when.gke_accelerator, accelerators, e.when.default_shape)
    ]


def _template(value: str, gpus: int, nics: int, mnnvl: bool = True) -> str:
    return (
        value.replace("{gpusPerNode}", str(gpus))
        .replace("{nicsPerNode}", str(nics))
        .replace("{enableMNNVL}", "1" if mnnvl else "0")
    )


def _resource_value(value: str | int | None, gpus: int, nics: int) -> str | int | None:
    if value is None or isinstance(value, int):
        return value
    whole = {"{nicsPerNode|int}": nics, "{gpusPerNode|int}": gpus}
    if value in whole:
        return whole[value] or None
    rendered = _template(value, gpus, nics)
    return None if rendered != value and rendered.strip() == "0" else rendered


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for k, v in extra.items():
        if isinstance(v, Mapping) and isinstance(base.get(k), dict):
            _deep_merge(base[k], v)
        else:
            base[k] = copy.deepcopy(v)
    return base


@dataclass
class Expected:
    """What the matched entries of one case add up to (NVCRE's mechanics, README/docs)."""

    platform: str
    arch: str
    framework: str
    entries: list[CatalogEntry]
    gpus: int = 0
    nics: int = 0
    mnnvl: bool = False
    env: dict[str, str] = field(default_factory=dict)  # worker node container
    trainer_env: dict[str, str] = field(default_factory=dict)  # TrainJob spec.trainer.env
    forward: dict[str, str] = field(default_factory=dict)  # MPI -x
    mpi_args: list[str] = field(default_factory=list)
    resources: dict[str, dict[str, str | int | None]] = field(default_factory=dict)
    volumes: list[dict[str, Any]] = field(default_factory=list)
    mounts: list[dict[str, Any]] = field(default_factory=list)
    security: dict[str, Any] = field(default_factory=dict)
    tolerations: list[dict[str, Any]] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    topology_key: str | None = None
    pre_command: list[str] = field(default_factory=list)
    compute_domain: bool = False
    claims: dict[str, tuple[str, str, int]] = field(
        default_factory=dict
    )  # claim: (suffix, class, n)

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entries]


def _env_items(items: Iterable[Any], gpus: int, nics: int, mnnvl: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for var in items:
        if var.when_gpus_per_node is None or gpus in var.when_gpus_per_node:
            out[var.name] = _template(var.value, gpus, nics, mnnvl)
    return out


def expected_for(
    platform: str, arch: str, framework: str, nodes: Iterable[Mapping[str, Any]] = ()
) -> Expected:
    entries = oracle_entries(platform, arch, framework, nodes)
    base = CATALOG.gpu_defaults(arch, platform)
    gpus, nics = base.gpus_per_node, base.nics_per_node
    x = Expected(platform, arch, framework, entries, gpus, nics, base.mnnvl)
    mpi = framework == "mpi"
    for e in entries:
        x.env.update(_env_items(e.env or (), gpus, nics, x.mnnvl))
        x.trainer_env.update(_env_items(e.trainer_env or (), gpus, nics, x.mnnvl))
        fwd = _env_items(e.forward_env or (), gpus, nics, x.mnnvl)
        if mpi:
            own = [_template(a, gpus, nics) for a in e.mpi_args or ()]
            own += [arg for n, v in fwd.items() for arg in ("-x", f"{n}={v}")]
            x.mpi_args = own + x.mpi_args  # NVCRE prepends each entry's mpiArgs
            x.forward.update(fwd)
        else:
            x.trainer_env.update(fwd)
        if e.resources is not None:
            for section in ("limits", "requests"):
                for k, raw in getattr(e.resources, section).items():
                    value = _resource_value(raw, gpus, nics)
                    target = x.resources.setdefault(section, {})
                    if value is None and raw is not None:
                        target.pop(k, None)
                    else:
                        target[k] = value
        if e.volumes is not None and e.volume_mounts is not None:
            x.volumes = [v.k8s() for v in e.volumes]
            x.mounts = [m.k8s() for m in e.volume_mounts]
        if e.security_context is not None:
            _deep_merge(x.security, e.security_context.k8s())
        if e.tolerations is not None:
            x.tolerations = [t.k8s() for t in e.tolerations]
        for k, v in (e.pod_annotations or {}).items():
            x.annotations[k] = _template(v, gpus, nics)
        x.topology_key = e.topology_key or x.topology_key
        x.pre_command += [_template(line, gpus, nics) for line in e.pre_command or ()]
        x.compute_domain = x.compute_domain or e.compute_domain
        for c in e.claim_templates or ():
            count = _resource_value(c.count, gpus, nics)
            if isinstance(count, int) and count > 0:
                x.claims[c.claim] = (c.suffix, c.device_class, count)
            else:
                x.claims.pop(c.claim, None)
    x.resources = {s: v for s, v in x.resources.items() if v}
    return x


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    entry: str
    framework: str
    num_nodes: int

    @property
    def slug(self) -> str:
        return f"{self.framework}-{self.num_nodes}-nodes"

    @property
    def id(self) -> str:
        return f"{self.entry}-{self.slug}"

    @property
    def golden(self) -> Path:
        return GOLDEN / self.entry / f"{self.slug}.yaml"


CASE_SHAPES = (("mpi", 2), ("mpi", 4), ("torch", 2))


def excluded(entry: CatalogEntry, framework: str) -> bool:
    return entry.when.frameworks is not None and framework not in entry.when.frameworks


def _case_params() -> list[Any]:
    params = []
    for entry in CATALOG.entries:
        for framework, n in CASE_SHAPES:
            case = Case(entry.name, framework, n)
            if excluded(entry, framework):
                only = "-".join(entry.when.frameworks or ())
                params.append(
                    pytest.param(
                        case,
                        id=f"{case.id}-skipped-entry-is-{only}-only",
                        marks=pytest.mark.skip(
                            reason=f"{entry.name} applies to {only} only (when.frameworks)"
                        ),
                    )
                )
            else:
                params.append(pytest.param(case, id=case.id))
    return params


def case_nodes(case: Case) -> list[dict[str, Any]]:
    entry = ENTRIES[case.entry]
    platform, arch = target_of(entry)
    shape = shape_labels(entry, platform, arch)
    probe = make_nodes(platform, arch, case.num_nodes, shape=shape)
    x = expected_for(platform, arch, case.framework, probe)
    requested = {k: str(v) for sec in x.resources.values() for k, v in sec.items() if v is not None}
    topology = {x.topology_key: TOPOLOGY_VALUES.get(x.topology_key, "domain-0")}
    return make_nodes(
        platform,
        arch,
        case.num_nodes,
        shape=shape,
        gpus=x.gpus,
        extra_allocatable=requested,
        extra_labels=topology if x.topology_key else None,
    )


def workloadrun(framework: str, num_nodes: int, **spec: Any) -> dict[str, Any]:
    if framework == "mpi":
        name = "nccl-tests"
        fw: dict[str, Any] = {
            "mpi": {"mpirunPath": MPIRUN, "binary": NCCL_BINARY, "args": list(NCCL_ARGS)}
        }
    else:
        name = "torch-ddp"
        fw = {"torch": {"script": TORCH_SCRIPT, "args": list(TORCH_ARGS)}}
    return wr(name, {"image": IMAGE, "framework": fw, "numNodes": num_nodes, **spec})


def resource_list(
    run: Mapping[str, Any],
    nodes: Sequence[Mapping[str, Any]],
    config: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    items: list[Any] = [copy.deepcopy(dict(run))]
    for i, n in enumerate(nodes):
        node = copy.deepcopy(dict(n))
        node["metadata"]["annotations"] = {
            "internal.config.kubernetes.io/path": "nodes.yaml",
            "internal.config.kubernetes.io/index": str(i),
        }
        items.append(node)
    rl: dict[str, Any] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList"}
    if config is not None:
        rl["functionConfig"] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "render",
                "annotations": {"config.kubernetes.io/local-config": "true"},
            },
            "data": dict(config),
        }
    rl["items"] = items
    return rl


CASE_CONFIG = {"strictGpuArch": "true"}


def render(rl: Mapping[str, Any]) -> RunOutcome:
    return run_krm(yaml.dump(dict(rl), Dumper=_DUMPER, sort_keys=False).encode())


def generated(text: str) -> list[dict[str, Any]]:
    doc = yaml.load(text, Loader=_LOADER)
    return [i for i in doc["items"] if is_generated(i)]


def stderr_of(out: RunOutcome) -> str:
    return "\n".join(out.stderr)


# --------------------------------------------------------------------------- object access


def runtime_of(objs: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    (rt,) = [o for o in objs if o["kind"] == "TrainingRuntime"]
    return rt


def trainjobs_of(objs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [o for o in objs if o["kind"] == "TrainJob"]


def pod_template(runtime: Mapping[str, Any], job: str) -> Mapping[str, Any]:
    (rj,) = [j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == job]
    return rj["template"]["spec"]["template"]


def container(pod: Mapping[str, Any], name: str = "node") -> Mapping[str, Any]:
    (c,) = [c for c in pod["spec"]["containers"] if c["name"] == name]
    return c


def env_dict(c: Mapping[str, Any]) -> dict[str, str]:
    names = [e["name"] for e in c.get("env") or []]
    assert len(names) == len(set(names)), f"duplicate env in container {c['name']}: {names}"
    return {e["name"]: e.get("value", "") for e in c.get("env") or []}


def trainer_argv(job: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(preCommand lines, argv) of a TrainJob, as the process sees them.

    A preCommand wraps the argv in bash -c. The kubelet turns ``$$`` into ``$`` in command
    and args (the render escapes ``$`` so that values arrive exactly as written).
    """
    trainer = job["spec"]["trainer"]
    command = [c.replace("$$", "$") for c in trainer.get("command") or []]
    args = [a.replace("$$", "$") for a in trainer.get("args") or []]
    if command == ["/bin/bash", "-c"]:
        *pre, last = args[0].split("\n")
        assert last.startswith("exec "), args[0]
        return pre, shlex.split(last.removeprefix("exec "))
    return [], command + args


def forwarded(argv: Sequence[str]) -> list[str]:
    """Every value that follows ``-x`` in an argv, in order."""
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-x"]


def find_sublist(haystack: Sequence[str], needle: Sequence[str]) -> int:
    """Index where ``needle`` occurs contiguously in ``haystack``, or -1."""
    n = len(needle)
    for i in range(len(haystack) - n + 1):
        if list(haystack[i : i + n]) == list(needle):
            return i
    return -1


# --------------------------------------------------------------------------- golden cases


def _write_or_compare(path: Path, text: str, update: bool) -> None:
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} missing: run pytest {Path(__file__).name} --update-golden"
    assert text == path.read_text(), f"output differs from {path}; rerun with --update-golden"


@pytest.mark.parametrize("case", _case_params())
def test_catalog_entry_renders_golden(case: Case, update_golden: bool) -> None:
    entry = ENTRIES[case.entry]
    platform, arch = target_of(entry)
    nodes = case_nodes(case)
    x = expected_for(platform, arch, case.framework, nodes)
    assert case.entry in x.names, (
        f"the synthesised inventory does not make {case.entry} match; extend SHAPES or "
        f"target_of() for its when: {entry.when}"
    )
    rl = resource_list(workloadrun(case.framework, case.num_nodes), nodes, CASE_CONFIG)
    out = render(rl)
    assert out.exit_code == 0, stderr_of(out)
    assert out.stderr == [], "a homogeneous, well-sized inventory renders without warnings"
    _write_or_compare(case.golden, out.stdout, update_golden)

    objs = generated(out.stdout)
    assert validate_all(objs) == []
    check_objects(objs, x, case, nodes)
    results = trainer_sim.check_render(objs, [rl["items"][0], *nodes], label=case.id)
    failed = [(name, detail) for name, ok, detail in results if not ok]
    assert not failed, failed

    again_rl = yaml.load(out.stdout, Loader=_LOADER)
    again_rl["functionConfig"] = rl["functionConfig"]  # the orchestrator passes it every time
    again = render(again_rl)
    assert again.exit_code == 0, stderr_of(again)
    assert again.stdout == out.stdout, "running on its own output must change nothing"


def check_objects(
    objs: Sequence[Mapping[str, Any]], x: Expected, case: Case, nodes: Sequence[Mapping[str, Any]]
) -> None:
    applied = ",".join(f"catalog:{n}" for n in x.names)
    for o in objs:
        ann = o["metadata"]["annotations"]
        assert ann[ANN_PLATFORM] == x.platform, o["kind"]
        assert ann[ANN_ARCH] == x.arch, o["kind"]
    (job,) = trainjobs_of(objs)
    assert f"catalog:{case.entry}" in job["metadata"]["annotations"][ANN_APPLIED].split(",")
    assert job["metadata"]["annotations"][ANN_APPLIED] == applied, "entries apply in file order"
    assert job["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"] == ",".join(
        sorted(n["metadata"]["name"] for n in nodes)
    )
    assert job["spec"]["trainer"]["numNodes"] == case.num_nodes
    assert job["spec"]["trainer"]["numProcPerNode"] == x.gpus

    runtime = runtime_of(objs)
    worker_pod = pod_template(runtime, "node")
    worker = container(worker_pod)
    pods = [worker_pod]
    entry = ENTRIES[case.entry]
    pre, argv = trainer_argv(job)
    assert pre == x.pre_command  # every matching entry's lines, in entry order

    # platform env: worker node container only, merged by name into the base env
    env = env_dict(worker)
    for name, value in x.env.items():
        assert env.get(name) == value, name
    # trainer env: on the TrainJob, as NVCRE's jobTemplate trainer.env
    trainer_env = {e["name"]: e["value"] for e in job["spec"]["trainer"].get("env") or []}
    assert trainer_env == x.trainer_env

    if case.framework == "mpi":
        launcher_pod = pod_template(runtime, "launcher")
        pods.append(launcher_pod)
        check_mpi_argv(argv, x, entry)
        launcher_env = env_dict(container(launcher_pod))
        for name in set(x.env) - set(launcher_env):
            assert name not in launcher_env  # the dependency patch targets the worker only
        # platform volumes are for the ranks, never the launcher
        launcher_volumes = {v["name"] for v in launcher_pod["spec"]["volumes"]}
        assert not launcher_volumes & {v["name"] for v in x.volumes}
    else:
        assert argv == ["torchrun", TORCH_SCRIPT, *TORCH_ARGS]
        for var in entry.forward_env or ():
            if var.when_gpus_per_node is None or x.gpus in var.when_gpus_per_node:
                assert var.name in trainer_env, f"torch: forwardEnv {var.name} is trainer env"
        assert x.forward == {}

    # resources on the worker container (the GPU rule plus the table; null deletes)
    res = worker["resources"]
    for section in ("limits", "requests"):
        deleted = x.resources.get(section, {}).get("nvidia.com/gpu", "") is None
        assert res.get(section, {}).get("nvidia.com/gpu") == (None if deleted else str(x.gpus))
        for name, value in x.resources.get(section, {}).items():
            assert res.get(section, {}).get(name) == value, (section, name)
    check_dra(objs, x, job, worker_pod, worker)
    for section in ("limits", "requests"):
        for name in getattr(entry.resources, section) if entry.resources else {}:
            present = name in res.get(section, {})
            assert present or x.resources.get(section, {}).get(name) is None, name

    # volumes and mounts on the workload pod
    volumes = worker_pod["spec"]["volumes"]
    mounts = worker["volumeMounts"]
    for v in x.volumes:
        assert dict(v) in volumes
    for m in x.mounts:
        assert dict(m) in mounts
    assert volumes[0]["name"] == "dshm"

    # tolerations on every pod, pod annotations on the workload pods
    for pod in pods:
        assert pod["spec"].get("tolerations", []) == x.tolerations
    assert (worker_pod.get("metadata") or {}).get("annotations", {}) == x.annotations

    # security context on the workload container
    sc = worker.get("securityContext") or {}
    expected_caps = list(x.security.get("capabilities", {}).get("add", []))
    if case.framework == "mpi":
        expected_caps = list(dict.fromkeys([*MPI_BASE_CAPS, *expected_caps]))
    if expected_caps:
        assert sc["capabilities"]["add"] == expected_caps
    for k, v in x.security.items():
        if k != "capabilities":
            assert sc.get(k) == v, k
    if case.framework != "mpi" and not x.security:
        assert "securityContext" not in worker


def check_dra(
    objs: Sequence[Mapping[str, Any]],
    x: Expected,
    job: Mapping[str, Any],
    worker_pod: Mapping[str, Any],
    worker: Mapping[str, Any],
) -> None:
    """ComputeDomain and claim templates before the TrainJobs, claimed by the worker pod."""
    run = job["metadata"]["labels"]["nvcre.nvidia.com/workload-run"]
    first_job = min(i for i, o in enumerate(objs) if o["kind"] == "TrainJob")
    cds = [o for o in objs if o["kind"] == "ComputeDomain"]
    rcts = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceClaimTemplate"}
    for o in [*cds, *rcts.values()]:
        assert objs.index(o) < first_job, f"{o['kind']} must precede the TrainJobs"
    want_claims: list[dict[str, str]] = []
    if x.compute_domain:
        (cd,) = cds  # one TrainJob: NVCRE's names
        assert cd["metadata"]["name"] == f"{run}-compute-domain"
        assert cd["spec"] == {
            "numNodes": job["spec"]["trainer"]["numNodes"],
            "channel": {
                "resourceClaimTemplate": {"name": f"{run}-channel"},
                "allocationMode": "Single",
            },
        }
        want_claims.append(
            {"name": "compute-domain", "resourceClaimTemplateName": f"{run}-channel"}
        )
    else:
        assert cds == []
    assert set(rcts) == {f"{run}-{suffix}" for suffix, _, _ in x.claims.values()}
    for claim, (suffix, device_class, count) in x.claims.items():
        (request,) = rcts[f"{run}-{suffix}"]["spec"]["spec"]["devices"]["requests"]
        assert request["exactly"] == {"deviceClassName": device_class, "count": count}
        want_claims.append({"name": claim, "resourceClaimTemplateName": f"{run}-{suffix}"})
    assert worker_pod["spec"].get("resourceClaims", []) == want_claims
    assert worker["resources"].get("claims", []) == [{"name": c["name"]} for c in want_claims]


def check_mpi_argv(argv: Sequence[str], x: Expected, entry: CatalogEntry) -> None:
    assert argv[0] == MPIRUN
    assert list(argv[-len(NCCL_ARGS) - 1 :]) == [NCCL_BINARY, *NCCL_ARGS]
    # the matched entries' mpiArgs (later entries first, each with its -x pairs) before the binary
    body = list(argv[: -len(NCCL_ARGS) - 1])
    if x.mpi_args:
        assert body[-len(x.mpi_args) :] == x.mpi_args
    own = [_template(a, x.gpus, x.nics) for a in entry.mpi_args or ()]
    assert find_sublist(argv, own) >= 0, f"{entry.name} mpiArgs {own} not in order in {argv}"
    # forwardEnv as -x NAME=value; the table's value is what the ranks get
    pairs = forwarded(argv)
    names = [p.split("=", 1)[0] for p in pairs]
    dupes = {n for n in names if names.count(n) > 1}
    assert not dupes, f"forwarded twice: {sorted(dupes)}"
    by_name = {p.split("=", 1)[0]: p for p in pairs}
    for name, value in x.forward.items():
        assert by_name.get(name) == f"{name}={value}", name
    for var in entry.forward_env or ():
        assert var.name in by_name, f"{entry.name} forwardEnv {var.name} not forwarded"


def test_golden_catalog_has_no_stale_cases(update_golden: bool) -> None:
    wanted = {
        Case(e.name, fw, n).golden
        for e in CATALOG.entries
        for fw, n in CASE_SHAPES
        if not excluded(e, fw)
    }
    present = set(GOLDEN.glob("*/*.yaml")) if GOLDEN.exists() else set()
    stale = sorted(present - wanted)
    if update_golden:
        for p in stale:
            p.unlink()
        for d in GOLDEN.iterdir() if GOLDEN.exists() else ():
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        stale = []
    assert not stale, f"goldens of removed entries or cases: {stale}; rerun with --update-golden"


# --------------------------------------------------------------------------- semantics


def test_user_env_and_mpi_args_beat_the_table() -> None:
    entry = ENTRIES["aws-h100-efa-transport-env"]
    nodes = case_nodes(Case(entry.name, "mpi", 2))
    run = workloadrun("mpi", 2, env=[{"name": "FI_PROVIDER", "value": "tcp"}])
    run["spec"]["framework"]["mpi"]["mpiArgs"] = [
        "-x",
        "NCCL_BUFFSIZE=1048576",
        "--bind-to",
        "core",
    ]
    out = render(resource_list(run, nodes))
    assert out.exit_code == 0, stderr_of(out)
    (job,) = trainjobs_of(generated(out.stdout))
    _, argv = trainer_argv(job)
    pairs = forwarded(argv)
    assert "FI_PROVIDER=tcp" in pairs and "FI_PROVIDER=efa" not in pairs
    # an explicit -x in mpiArgs comes last, and Open MPI lets the later duplicate win
    buffsize = [p for p in pairs if p.startswith("NCCL_BUFFSIZE=")]
    assert buffsize[-1] == "NCCL_BUFFSIZE=1048576", buffsize
    platform_args = ["-x", "FI_PROVIDER=tcp", "-x", "FI_EFA_USE_DEVICE_RDMA=1"]
    assert 0 < find_sublist(argv, platform_args) < find_sublist(argv, ["--bind-to", "core"])


def test_spec_overrides_come_after_the_table() -> None:
    entry = ENTRIES["aws-gb300-mpi-roce-transport"]
    nodes = case_nodes(Case(entry.name, "mpi", 2))
    run = workloadrun("mpi", 2)
    run["spec"]["framework"]["mpi"]["mpiArgs"] = ["--report-bindings"]
    run["spec"]["overrides"] = [
        {
            "when": {"platform": {"equals": "aws"}, "gpuArchitecture": {"equals": "gb300"}},
            "mpiArgs": ["--mca", "btl_tcp_if_include", "eth1"],
            "preCommand": ["echo override"],
        }
    ]
    out = render(resource_list(run, nodes))
    assert out.exit_code == 0, stderr_of(out)
    (job,) = trainjobs_of(generated(out.stdout))
    assert job["metadata"]["annotations"][ANN_APPLIED].endswith(",spec.overrides[0]")
    pre, argv = trainer_argv(job)
    x = expected_for("aws", "gb300", "mpi", nodes)
    assert pre == [*x.pre_command, "echo override"]
    table = find_sublist(argv, x.mpi_args)
    override = find_sublist(argv, ["--mca", "btl_tcp_if_include", "eth1"])
    assert 0 < table < override < argv.index("--report-bindings")


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(e.name, id=f"{e.name}-node-without-{e.topology_key}-refused")
        for e in CATALOG.entries
        if e.topology_key
    ],
)
def test_node_missing_the_topology_label_is_named(entry: str) -> None:
    case = Case(entry, "mpi" if not excluded(ENTRIES[entry], "mpi") else "torch", 2)
    nodes = case_nodes(case)
    key = ENTRIES[entry].topology_key
    assert key is not None
    del nodes[-1]["metadata"]["labels"][key]
    out = render(resource_list(workloadrun(case.framework, 2), nodes))
    assert out.exit_code == 1
    missing = nodes[-1]["metadata"]["name"]
    assert any(repr(missing) in line and repr(key) in line for line in out.stderr), out.stderr


# --------------------------------------------------------------------------- fleets


def test_mixed_platform_fleet_is_refused_naming_platforms_and_nodes() -> None:
    aws = make_nodes("aws", "h100", 5, shape=SHAPES[("aws", "h100")])
    gcp = make_nodes("gcp", "h100", 1, shape=SHAPES[("gcp", "h100")])
    out = render(resource_list(workloadrun("mpi", 2), aws + gcp))
    assert out.exit_code == 1
    err = stderr_of(out)
    assert "heterogeneous platforms detected" in err
    names = sorted(n["metadata"]["name"] for n in aws)
    assert f"aws: 5 nodes ({', '.join(names[:3])} and 2 more)" in err
    assert f"gcp: 1 node ({gcp[0]['metadata']['name']})" in err


def test_mixed_platform_fleet_renders_when_the_platform_is_forced() -> None:
    aws = make_nodes("aws", "h100", 3)
    gcp = make_nodes("gcp", "h100", 1)
    out = render(resource_list(workloadrun("mpi", 2), aws + gcp, {"platform": "aws"}))
    assert out.exit_code == 0, stderr_of(out)


def _mixed_gpu_nodes() -> list[dict[str, Any]]:
    shape = SHAPES[("aws", "h100")]
    return make_nodes("aws", "h100", 3, shape=shape) + make_nodes(
        "aws", "h200", 1, shape=shape, first=4
    )


def test_mixed_gpus_warn_naming_the_minority_nodes() -> None:
    nodes = _mixed_gpu_nodes()
    minority = nodes[-1]["metadata"]["name"]
    out = render(resource_list(workloadrun("mpi", 2), nodes))
    assert out.exit_code == 0, stderr_of(out)
    warnings = [line for line in out.stderr if line.startswith("[warning]")]
    assert any(
        "mixed GPU architectures" in w and "h100 on 3 of 4" in w and minority in w for w in warnings
    ), warnings
    (job, *_) = trainjobs_of(generated(out.stdout))
    assert job["metadata"]["annotations"][ANN_ARCH] == "h100"


def test_mixed_gpus_fail_with_strict_gpu_arch() -> None:
    nodes = _mixed_gpu_nodes()
    minority = nodes[-1]["metadata"]["name"]
    out = render(resource_list(workloadrun("mpi", 2), nodes, {"strictGpuArch": "true"}))
    assert out.exit_code == 1
    errors = [line for line in out.stderr if line.startswith("[error]")]
    assert any("strict mode" in e and minority in e for e in errors), errors
    assert not generated(out.stdout)


def _short_fleet() -> list[dict[str, Any]]:
    return make_nodes("aws", "h100", 2, shape=SHAPES[("aws", "h100")]) + make_nodes(
        "aws", "h100", 1, shape=SHAPES[("aws", "h100")], gpus=4, first=3
    )


def test_fleet_with_different_gpu_counts_is_refused_with_the_counts() -> None:
    nodes = _short_fleet()
    short = nodes[-1]["metadata"]["name"]
    out = render(resource_list(workloadrun("mpi", 2), nodes))
    assert out.exit_code == 1
    errors = [line for line in out.stderr if line.startswith("[error]")]
    assert any(
        "different numbers of GPUs per node" in e and "8 GPUs: 2 nodes" in e and short in e
        for e in errors
    ), errors
    assert not generated(out.stdout)


def test_node_with_fewer_gpus_than_gpus_per_node_is_left_out_and_named() -> None:
    nodes = _short_fleet()
    short = nodes[-1]["metadata"]["name"]
    out = render(resource_list(workloadrun("mpi", 2, gpusPerNode=8), nodes))
    assert out.exit_code == 0, stderr_of(out)
    warnings = [line for line in out.stderr if line.startswith("[warning]")]
    assert any(
        f"{short}: has 4 nvidia.com/gpu (allocatable nvidia.com/gpu), needs 8" in w
        for w in warnings
    ), warnings
    assert not any(nodes[0]["metadata"]["name"] in w for w in warnings)
    (job, *_) = trainjobs_of(generated(out.stdout))
    assert short not in json.dumps(job)


def test_no_node_with_enough_gpus_fails_with_nvcre_wording() -> None:
    nodes = _short_fleet()
    out = render(resource_list(workloadrun("mpi", 1, gpusPerNode=16), nodes))
    assert out.exit_code == 1
    errors = [line for line in out.stderr if line.startswith("[error]")]
    assert any(
        "No node can supply the 16 nvidia.com/gpu the workload requests per node; "
        "best available is 8" in e
        for e in errors
    ), errors


# --------------------------------------------------------------------------- preview


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("workloadrun-fn")
    cmd = [str(exe)] if exe.exists() else [shutil.which("workloadrun-fn") or "workloadrun-fn"]
    env = {k: v for k, v in os.environ.items() if k != "NGC_API_KEY"}
    return subprocess.run(
        [*cmd, *args], cwd=REPO, capture_output=True, text=True, env=env, timeout=60
    )


@pytest.fixture(scope="module")
def aws_h100_preview() -> subprocess.CompletedProcess[str]:
    return _cli(
        "render", "--platform", "aws", "--gpu-arch", "h100", "fixtures/workloadrun-basic-mpi.yaml"
    )


def test_preview_aws_h100_prints_the_efa_settings_in_the_mpirun_argv(
    aws_h100_preview: subprocess.CompletedProcess[str],
) -> None:
    proc = aws_h100_preview
    assert proc.returncode == 0, proc.stderr
    objs = [d for d in yaml.load_all(proc.stdout, Loader=_LOADER) if d]
    jobs = trainjobs_of(objs)
    assert jobs
    x = expected_for("aws", "h100", "mpi")
    assert "aws-h100-efa-transport-env" in x.names and x.forward and x.mpi_args
    for job in jobs:
        assert job["metadata"]["annotations"][ANN_APPLIED] == ",".join(
            f"catalog:{n}" for n in x.names
        )
        _, argv = trainer_argv(job)
        pairs = forwarded(argv)
        for literal in ("FI_PROVIDER=efa", "FI_EFA_USE_DEVICE_RDMA=1", "FI_EFA_FORK_SAFE=1"):
            assert literal in pairs
        assert "--bind-to" not in argv and "btl_tcp_if_exclude" not in argv  # not NVCRE's
        for name, value in x.forward.items():
            assert f"{name}={value}" in pairs
        assert find_sublist(argv, x.mpi_args) > 0
    worker = container(pod_template(runtime_of(objs), "node"))
    assert worker["resources"]["limits"]["vpc.amazonaws.com/efa"] == 32
    assert "IPC_LOCK" in worker["securityContext"]["capabilities"]["add"]


def test_preview_without_nodes_renders_on_synthetic_nodes(
    aws_h100_preview: subprocess.CompletedProcess[str],
) -> None:
    proc = aws_h100_preview
    assert proc.returncode == 0, proc.stderr
    objs = [d for d in yaml.load_all(proc.stdout, Loader=_LOADER) if d]
    assert {o["kind"] for o in objs} == {"TrainingRuntime", "TrainJob"}, "no Secret without config"
    (job,) = trainjobs_of(objs)
    assert job["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"] == ",".join(
        f"synthetic-node-{i}" for i in range(4)
    )
    assert "platform aws, GPU h100" in proc.stderr
    assert validate_all(objs) == []


@pytest.mark.parametrize(
    ("flag", "value", "valid"),
    [
        pytest.param("--platform", "nope", PLATFORMS, id="unknown-platform-refused-with-the-list"),
        pytest.param(
            "--gpu-arch", "v100", GPU_ARCHITECTURES, id="unknown-gpu-arch-refused-with-the-list"
        ),
    ],
)
def test_preview_unknown_forced_name_is_refused(
    flag: str, value: str, valid: Sequence[str]
) -> None:
    proc = _cli("render", flag, value, "fixtures/workloadrun-basic-mpi.yaml")
    assert proc.stdout == ""
    assert ", ".join(valid) in proc.stderr
    assert repr(value) in proc.stderr
    assert proc.returncode == 1, (
        f"exit {proc.returncode}, expected 1 (invalid input): {proc.stderr}"
    )


@pytest.mark.parametrize(
    ("option", "value", "valid"),
    [
        pytest.param("platform", "nope", PLATFORMS, id="platform-option-nope-is-an-error-result"),
        pytest.param(
            "gpuArch", "v100", GPU_ARCHITECTURES, id="gpuarch-option-v100-is-an-error-result"
        ),
    ],
)
def test_function_option_unknown_forced_name_is_an_error_result(
    option: str, value: str, valid: Sequence[str]
) -> None:
    rl = resource_list(workloadrun("mpi", 2), [], {option: value})
    try:
        out = render(rl)
    except ValueError as exc:
        pytest.fail(f"run_krm raised {exc!r} instead of returning an error result (exit 1)")
    assert out.exit_code == 1
    doc = yaml.load(out.stdout, Loader=_LOADER)
    errors = [r for r in doc["results"] if r["severity"] == "error"]
    assert any(", ".join(valid) in r["message"] and option in r["message"] for r in errors)
    assert not [i for i in doc["items"] if is_generated(i)]


def test_preview_of_every_topology_pair_renders_on_synthetic_nodes() -> None:
    """``render --platform X --gpu-arch Y`` must work for pairs whose entries set a topologyKey."""
    from krm_fn.entry.preview import preview

    failures = []
    pairs = sorted(
        {
            (p, a)
            for e in CATALOG.entries
            if e.topology_key
            for p in e.when.platform or ()
            for a in e.when.gpu_architecture or ()
        }
    )
    assert pairs
    for platform, arch in pairs:
        code, _, err = preview(
            [str(REPO / "fixtures" / "workloadrun-basic-mpi.yaml")], None, platform, arch, "yaml"
        )
        if code != 0:
            failures.append(f"{platform} {arch}: exit {code}: {err[0] if err else ''}")
    assert not failures, "offline preview fails:\n" + "\n".join(failures)


# --------------------------------------------------------------------------- docs table


def _code(text: str) -> str:
    return "`" + str(text).replace("|", "\\|") + "`"


def _cell(parts: Iterable[str]) -> str:
    items = list(parts)
    return "<br>".join(items) if items else "—"


def _args(args: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) if any(c.isspace() for c in a) or a == "" else a for a in args)


def _when(entry: CatalogEntry) -> str:
    w = entry.when
    parts = [
        ", ".join(w.platform) if w.platform else "any platform",
        ", ".join(w.gpu_architecture) if w.gpu_architecture else "any GPU",
    ]
    if w.frameworks:
        parts.append(f"{'/'.join(w.frameworks)} only")
    return "; ".join(parts)


def _toleration(t: Mapping[str, Any]) -> str:
    text = t.get("key", "")
    if t.get("operator", "Equal") == "Equal" and "value" in t:
        text += f"={t['value']}"
    if t.get("operator") == "Exists":
        text += " (Exists)"
    if t.get("effect"):
        text += f":{t['effect']}"
    return _code(text)


def _annotation(k: str, v: str) -> str:
    if len(v) > 60:
        try:
            parsed = json.loads(v)
        except ValueError:
            parsed = None
        v = f"[{len(parsed)} items]" if isinstance(parsed, list) else v[:40] + "…"
    return _code(f"{k}: {v}")


def _flatten(prefix: str, value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in _flatten(f"{prefix}.{k}" if prefix else k, v)]
    if isinstance(value, list):
        return [f"{prefix}: [{', '.join(map(str, value))}]"]
    return [f"{prefix}: {json.dumps(value)}"]


def _env_cell(env: Iterable[Any]) -> str:
    return _cell(_code(f"{v.name}={v.value}") for v in env)


def _resources_cell(resources: Mapping[str, Mapping[str, Any]]) -> str:
    limits, requests = dict(resources.get("limits", {})), dict(resources.get("requests", {}))
    out = []
    for name in dict.fromkeys([*limits, *requests]):
        lv, rv = limits.get(name, "—"), requests.get(name, "—")
        text = "deleted" if lv is None else json.dumps(lv)
        out.append(_code(f"{name}: {text}") + ("" if lv == rv else f" (requests {rv})"))
    return _cell(out)


def _dra_cell(overlay: Any, run: str = "<run>") -> str:
    out = []
    if overlay.compute_domain:
        out.append(
            f"ComputeDomain {_code(run + '-compute-domain')} (channel {_code(run + '-channel')}),"
            " claim `compute-domain`"
        )
    for c in overlay.claim_templates:
        out.append(
            f"ResourceClaimTemplate {_code(run + '-' + c.suffix)}: {c.count} × "
            f"{_code(c.device_class)}, claim {_code(c.claim)}"
        )
    return _cell(out)


def _overlay_rows(overlays: Mapping[str, Any]) -> list[str]:
    """One table row per setting, one column per framework group."""
    rows = [
        ("entries", lambda o: _cell(_code(n) for n in o.applied)),
        ("mpirun args (`-x` included)", lambda o: _code(_args(o.mpi_args)) if o.mpi_args else "—"),
        ("worker `node` container env", lambda o: _env_cell(o.env)),
        ("TrainJob `spec.trainer.env`", lambda o: _env_cell(o.trainer_env)),
        ("worker resources", lambda o: _resources_cell(o.resources)),
        ("DRA objects and claims", _dra_cell),
        (
            "worker securityContext",
            lambda o: _cell(_code(s) for s in _flatten("", dict(o.security_context))),
        ),
        ("worker tolerations", lambda o: _cell(_toleration(t) for t in o.tolerations)),
        (
            "worker pod annotations",
            lambda o: _cell(_annotation(k, v) for k, v in o.pod_annotations.items()),
        ),
        ("topologyKey", lambda o: _code(o.topology_key) if o.topology_key else "—"),
        ("preCommand", lambda o: _cell(_code(line) for line in o.pre_command)),
    ]
    lines = ["| setting | " + " | ".join(overlays) + " |", "|---" * (len(overlays) + 1) + "|"]
    for label, cell in rows:
        cells = [cell(o) for o in overlays.values()]
        if any(c != "—" for c in cells):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def platforms_doc() -> str:
    """The generated block of docs/platforms.md: per platform and GPU, what is applied."""
    from krm_fn.platforms.overlay import make_context, resolve

    lines = [
        "<!-- generated by tests/test_catalog_render.py from krm_fn/data/platforms.yaml; "
        "rerun with --update-golden -->",
        "",
    ]
    for platform in PLATFORMS:
        lines += [f"### {platform}", ""]
        nothing = []
        for arch in (*GPU_ARCHITECTURES, "unknown"):
            overlays = {}
            for framework in ("mpi", "torch", "exec"):
                ctx = make_context(
                    CATALOG, platform=platform, gpu_architecture=arch, framework=framework
                )
                overlays[framework] = resolve(CATALOG, ctx)
            if not any(o.applied for o in overlays.values()):
                nothing.append(arch)
                continue
            counts = make_context(
                CATALOG, platform=platform, gpu_architecture=arch, framework="mpi"
            )
            groups: dict[str, Any] = {}
            for framework, overlay in overlays.items():
                same = [k for k, v in groups.items() if v == overlay]
                if same:
                    groups[f"{same[0]} / {framework}"] = groups.pop(same[0])
                else:
                    groups[framework] = overlay
            lines += [
                f"#### {platform} · {arch}",
                "",
                f"Defaults: {counts.gpus_per_node} GPUs, {counts.nics_per_node} NICs "
                "(`mlnxPerNode`) per node; values below use them.",
                "",
                *_overlay_rows(groups),
                "",
            ]
        if nothing:
            lines += [f"Nothing applied (NVCRE has no entry) for: {', '.join(nothing)}.", ""]
    lines += [
        "### Sources",
        "",
        "| entry | when | NVCRE source |",
        "|---|---|---|",
    ]
    for e in CATALOG.entries:
        lines.append(f"| {_code(e.name)} | {_when(e)} | {e.source} |")
    return "\n".join(lines) + "\n"


def test_docs_table_is_in_sync(update_golden: bool) -> None:
    text = DOCS.read_text()
    assert TABLE_START in text and TABLE_END in text, f"markers missing in {DOCS}"
    head, rest = text.split(TABLE_START, 1)
    current, tail = rest.split(TABLE_END, 1)
    wanted = "\n" + platforms_doc()
    if update_golden and current != wanted:
        DOCS.write_text(head + TABLE_START + wanted + TABLE_END + tail)
        current = wanted
    assert current == wanted, f"the catalog table in {DOCS} is stale; rerun with --update-golden"


# --------------------------------------------------------------------------- DRA, several TrainJobs

GB200_CASE = REPO / "tests" / "golden" / "gb200-aws-two-trainjobs-each-with-its-own-compute-domain"


def test_gb200_run_with_two_trainjobs_gets_a_compute_domain_per_trainjob() -> None:
    rl = yaml.load((GB200_CASE / "input.yaml").read_text(), Loader=_LOADER)
    out = render(rl)
    assert out.exit_code == 0, stderr_of(out)
    objs = generated(out.stdout)
    assert validate_all(objs) == []  # ComputeDomain against the pinned CRD
    jobs = trainjobs_of(objs)
    assert [j["metadata"]["name"] for j in jobs] == ["gb-nccl-group-0", "gb-nccl-group-1"]
    first_job = objs.index(jobs[0])
    cds = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ComputeDomain"}
    runtimes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "TrainingRuntime"}
    assert set(runtimes) == {f"{j['metadata']['name']}-runtime" for j in jobs}
    for job in jobs:
        name = job["metadata"]["name"]
        cd = cds[f"{name}-compute-domain"]
        assert objs.index(cd) < first_job and objs.index(runtimes[f"{name}-runtime"]) < first_job
        assert cd["spec"]["numNodes"] == job["spec"]["trainer"]["numNodes"] == 2
        assert cd["spec"]["channel"] == {
            "resourceClaimTemplate": {"name": f"{name}-channel"},
            "allocationMode": "Single",
        }
        assert job["spec"]["runtimeRef"]["name"] == f"{name}-runtime"
        pod = pod_template(runtimes[f"{name}-runtime"], "node")
        assert pod["spec"]["resourceClaims"] == [
            {"name": "compute-domain", "resourceClaimTemplateName": f"{name}-channel"}
        ]
        assert container(pod)["resources"]["claims"] == [{"name": "compute-domain"}]
        launcher = pod_template(runtimes[f"{name}-runtime"], "launcher")
        assert "resourceClaims" not in launcher["spec"]  # the launcher runs on no GPU node
    assert len(cds) == len(jobs)
    inputs = [i for i in rl["items"] if i["kind"] in ("WorkloadRun", "Node")]
    results = trainer_sim.check_render(objs, inputs, label="gb200-two-trainjobs")
    failed = [(name, detail) for name, ok, detail in results if not ok]
    assert not failed, failed


def test_spec_env_beats_the_table_in_mpi_args_as_nvcre_golden_mpi_nscale_spec_env_wins() -> None:
    # NVCRE golden mpi-nscale-spec-env-wins (reference section 2.6): the user's
    # NCCL_IB_PCI_RELAXED_ORDERING=0 replaces the platform's 1 in the -x pairs.
    nodes = case_nodes(Case("nscale-ib-env", "mpi", 2))
    run = workloadrun("mpi", 2, env=[{"name": "NCCL_IB_PCI_RELAXED_ORDERING", "value": "0"}])
    out = render(resource_list(run, nodes))
    assert out.exit_code == 0, stderr_of(out)
    (job,) = trainjobs_of(generated(out.stdout))
    pairs = forwarded(trainer_argv(job)[1])
    assert "NCCL_IB_PCI_RELAXED_ORDERING=0" in pairs
    assert "NCCL_IB_PCI_RELAXED_ORDERING=1" not in pairs


def test_spec_env_beats_the_table_in_worker_env_and_trainer_env() -> None:
    nodes = case_nodes(Case("mistral-gb300-ib-env", "torch", 2))
    run = workloadrun("torch", 2, env=[{"name": "NCCL_IB_HCA", "value": "mlx5_9:1"}])
    out = render(resource_list(run, nodes))
    assert out.exit_code == 0, stderr_of(out)
    objs = generated(out.stdout)
    (job,) = trainjobs_of(objs)
    worker = container(pod_template(runtime_of(objs), "node"))
    assert env_dict(worker)["NCCL_IB_HCA"] == "mlx5_9:1"
    trainer_env = {e["name"]: e["value"] for e in job["spec"]["trainer"]["env"]}
    assert trainer_env["NCCL_IB_HCA"] == "mlx5_9:1"
    assert trainer_env["NCCL_DMABUF_ENABLE"] == "0"  # the rest of the table still applies
