"""Generate a realistic, deterministic Kubernetes Node inventory (and optionally a ResourceList).

Each Node looks like what ``kubectl get nodes -o yaml`` prints for a GPU node (about 10 KB of
YAML): 50+ labels including Node Feature Discovery (``feature.node.kubernetes.io/*``) and GPU
Feature Discovery (``nvidia.com/*``) ones, annotations (one JSON-valued), ``status.images``
with dozens of entries, conditions, addresses, ``nodeInfo`` and capacity/allocatable. The
text is written the way kubectl (go-yaml) writes it: block style, compact sequences, strings
that would read as another type in double quotes, JSON in single quotes.

Shapes follow shared/reference/platforms.md §3 (providerID formats) and §4 (GFD labels).
Everything the function reads about a platform comes from its platform table
(krm_fn/data/platforms.yaml): the platform names, each platform's providerID prefix and
detection labels (its first detection rule), topology keys, NIC resource, GPU product and
count; only the values that make a node look real (zones, ids, node pools) are written here.

Usage::

    python bench/make_inventory.py --nodes 1000 --out /tmp/nodes.yaml
    python bench/make_inventory.py --nodes 1000 --resourcelist --out /tmp/rl.yaml
    python bench/make_inventory.py --nodes 1000 --resourcelist --as-list --platform gcp

Everything is a pure function of the arguments: the same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from krm_fn.platforms.catalog import Platform, load_catalog

TABLE = load_catalog()
PLATFORMS = tuple(p.name for p in TABLE.platforms)

# platform -> (instance type, region, zone, GPU model, NICs per node)
SHAPES: dict[str, tuple[str, str, str, str, int]] = {
    "aws": ("p5.48xlarge", "us-east-1", "us-east-1a", "h100", 32),
    "gcp": ("a3-megagpu-8g", "us-central1", "us-central1-a", "h100", 8),
    "azure": ("Standard_ND96isr_H100_v5", "eastus", "eastus-1", "h100", 8),
    "oci": ("BM.GPU.GB200.4", "us-ashburn-1", "US-ASHBURN-AD-1", "gb200", 8),
    "coreweave": ("gd-8xh100ib-i128", "US-EAST-04", "US-EAST-04A", "h100", 8),
    "nscale": ("gpu-h200-sxm.8gpu", "no-svg-1", "no-svg-1a", "h200", 8),
    "togetherai": ("h100-8x", "us-west", "us-west-2", "h100", 8),
    "mistral": ("hgx-b200", "eu-west", "eu-west-3", "b200", 8),
    "forge": ("gb200-nvl72", "site-a", "site-a-r1", "gb200", 4),
    "onprem": ("dgx-h100", "dc1", "dc1-row3", "h100", 8),
}

IMAGES = (
    "nvcr.io/nvidia/pytorch",
    "nvcr.io/nvidia/tensorflow",
    "nvcr.io/nvidia/nemo",
    "nvcr.io/nvidia/cuda",
    "nvcr.io/nvidia/k8s-device-plugin",
    "nvcr.io/nvidia/gpu-feature-discovery",
    "nvcr.io/nvidia/cloud-native/dcgm",
    "nvcr.io/nvidia/k8s/dcgm-exporter",
    "nvcr.io/nvidia/gpu-operator",
    "nvcr.io/nvidia/driver",
    "nvcr.io/nvidia/k8s/container-toolkit",
    "nvcr.io/nvidia/cloud-native/k8s-mig-manager",
    "registry.k8s.io/kube-proxy",
    "registry.k8s.io/pause",
    "registry.k8s.io/nfd/node-feature-discovery",
    "docker.io/calico/node",
    "docker.io/calico/cni",
    "quay.io/prometheus/node-exporter",
    "ghcr.io/kubeflow/trainer/mpi-runtime",
    "ghcr.io/kubeflow/trainer/torch-runtime",
    "mcr.microsoft.com/oss/kubernetes/csi/azuredisk-csi",
    "public.ecr.aws/eks-distro/kubernetes-csi/livenessprobe",
    "docker.io/mellanox/network-operator",
    "nvcr.io/nvidia/mellanox/doca-driver",
    "docker.io/library/busybox",
    "docker.io/bitnami/kubectl",
    "quay.io/jetstack/cert-manager-controller",
    "ghcr.io/nvidia/k8s-dra-driver-gpu",
)

IMAGES_PER_NODE = 18

CPU_FEATURES = (
    "ADX",
    "AESNI",
    "AMXBF16",
    "AMXINT8",
    "AMXTILE",
    "AVX",
    "AVX2",
    "AVX512BF16",
    "AVX512BITALG",
    "AVX512BW",
    "AVX512CD",
    "AVX512DQ",
    "AVX512F",
    "AVX512FP16",
    "AVX512IFMA",
    "AVX512VBMI",
    "AVX512VBMI2",
    "AVX512VL",
    "AVX512VNNI",
    "AVX512VPOPCNTDQ",
    "CMPXCHG8",
    "FMA3",
    "FXSR",
    "GFNI",
    "SHA",
    "VAES",
)

_PLAIN_CHARS = re.compile(r"^[A-Za-z0-9/][A-Za-z0-9 _./:@=+,;()-]*$")
_RESOLVER = yaml.resolver.Resolver()


@functools.lru_cache(maxsize=1 << 16)
def _scalar_text(text: str) -> str:
    if text == "":
        return '""'
    if '"' in text or "\\" in text:
        return "'" + text.replace("'", "''") + "'"
    plain = (
        _PLAIN_CHARS.match(text)
        and not text.endswith((" ", ":"))
        and ": " not in text
        and " #" not in text
        and _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"
    )
    return text if plain else '"' + text + '"'


def _scalar(value: Any) -> str:
    """A scalar as kubectl (go-yaml) writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _scalar_text(str(value))


def emit(obj: Any, indent: int = 0) -> Iterator[str]:
    """Block YAML lines for a mapping, kubectl style (compact sequences)."""
    pad = " " * indent
    for key, val in obj.items():
        if isinstance(val, dict):
            if not val:
                yield f"{pad}{key}: {{}}"
            else:
                yield f"{pad}{key}:"
                yield from emit(val, indent + 2)
        elif isinstance(val, list):
            if not val:
                yield f"{pad}{key}: []"
            else:
                yield f"{pad}{key}:"
                yield from _emit_seq(val, indent)
        else:
            yield f"{pad}{key}: {_scalar(val)}"


def _emit_seq(seq: list[Any], indent: int) -> Iterator[str]:
    pad = " " * indent
    for entry in seq:
        if isinstance(entry, dict):
            lines = list(emit(entry, indent + 2))
            yield pad + "- " + lines[0][indent + 2 :]
            yield from lines[1:]
        else:
            yield f"{pad}- {_scalar(entry)}"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _platform(name: str) -> Platform:
    platform = TABLE.platform(name)
    assert platform is not None, name
    return platform


def _uuid(rng: random.Random) -> str:
    return f"{_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 12)}"


# platform -> what follows its providerID prefix, from (node name, zone, index, rng)
_PROVIDER_TAILS: dict[str, Any] = {
    "aws": lambda name, zone, i, rng: f"/{zone}/i-{_hex(rng, 17)}",
    "gcp": lambda name, zone, i, rng: f"nvcre-training/{zone}/{name}",
    "azure": lambda name, zone, i, rng: (
        "/subscriptions/3b9c4d1e-0000-4000-8000-000000000001/resourceGroups/"
        "mc_gpu-rg_gpu-aks_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/"
        f"aks-ndh100-{i // 1000:04d}-vmss/virtualMachines/{i % 1000}"
    ),
    "oci": lambda name, zone, i, rng: f"instance.oc1.iad.anuwcljt{_hex(rng, 52)}",
    "nscale": lambda name, zone, i, rng: f"/{_uuid(rng)}",
    "togetherai": lambda name, zone, i, rng: f"tai-workers/{name}",
    "mistral": lambda name, zone, i, rng: (
        f"metal3/{name}/{_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}"
    ),
}


def _provider_id(platform: str, name: str, zone: str, i: int, rng: random.Random) -> str:
    """The platform's first detection rule's providerID prefix and a realistic tail."""
    rules = _platform(platform).detect
    prefix = rules[0].provider_id if rules else None
    return prefix + _PROVIDER_TAILS[platform](name, zone, i, rng) if prefix else ""


# Values of each platform's detection labels (in the order its rules name them), by index.
_DETECTION_VALUES: dict[str, list[Any]] = {
    "coreweave": [lambda i: "gd-8xh100ib-i128", lambda i: f"nvl-{i // 72:04d}"],
    "togetherai": [lambda i: "true"],
    "forge": [lambda i: "forge-site-a"],
}
# Values of each platform's topology keys (in the table's order), by index.
_TOPOLOGY_VALUES: dict[str, list[Any]] = {
    "aws": [
        lambda i: f"nn-{i // 512:08x}",
        lambda i: f"nn-{i // 64:08x}",
        lambda i: f"nn-{i // 16:08x}",
    ],
    "gcp": [
        lambda i: f"block-{i // 72:04x}",
        lambda i: f"subblock-{i // 18:04x}",
        lambda i: f"host-{i:06x}",
    ],
}


def _platform_labels(platform: str, i: int, name: str) -> dict[str, str]:
    """The table's detection and topology labels, then labels that make the node look real."""
    block, sub = i // 72, i // 18
    own = _platform(platform)
    labels = {
        key: value(i)
        for keys, values in (
            (own.detection_labels(), _DETECTION_VALUES.get(platform, [])),
            (own.topology_keys, _TOPOLOGY_VALUES.get(platform, [])),
        )
        for key, value in zip(keys, values, strict=False)
    }
    ocid = own.detect[0].provider_id if own.detect else ""
    labels.update(
        {
            "aws": {
                "eks.amazonaws.com/nodegroup": "gpu-p5",
                "eks.amazonaws.com/capacityType": "ON_DEMAND",
                "k8s.io/cloud-provider-aws": "a94f0c3e6d0b6c1f",
            },
            "gcp": {
                "cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb",
                "cloud.google.com/gke-nodepool": "a3mega-pool",
            },
            "azure": {
                "kubernetes.azure.com/agentpool": "ndh100",
                "kubernetes.azure.com/cluster": "mc_gpu-rg_gpu-aks_eastus",
                "kubernetes.azure.com/accelerator": "nvidia",
                "agentpool": "ndh100",
            },
            "oci": {
                "oci.oraclecloud.com/host.network_block_id": f"{ocid}netblock.{block:06d}",
                "oci.oraclecloud.com/host.rack_id": f"{ocid}rack.{sub:06d}",
                "oci.oraclecloud.com/rdma.local_block_id": f"lb-{block:04d}",
            },
            "coreweave": {"node.coreweave.cloud/reserved": "nvcre"},
            "forge": {"nke.nvidia.com/rack": f"r{sub:04d}"},
            "mistral": {"metal3.io/cluster": "mistral-b200"},
            "nscale": {"nscale.com/cluster": "svg-h200"},
            "onprem": {"dc.example.com/row": f"row-{block:03d}"},
        }.get(platform, {})
    )
    return labels


def node(i: int, platform: str, rng: random.Random) -> dict[str, Any]:
    """One Node object (as a dict, in kubectl's key order)."""
    itype, region, zone, model, nics = SHAPES[platform]
    gpu = TABLE.gpu(model)
    assert gpu is not None, model
    product, gpus = gpu.product, TABLE.gpu_defaults(model, platform).gpus_per_node
    name = f"gpu-{platform}-{i:05d}"
    grace = product.startswith("NVIDIA-GB")
    blackwell = grace or "B200" in product or "B300" in product
    arch = "arm64" if grace else "amd64"
    labels: dict[str, Any] = {
        "beta.kubernetes.io/arch": arch,
        "beta.kubernetes.io/instance-type": itype,
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
    }
    for feat in CPU_FEATURES:
        labels[f"feature.node.kubernetes.io/cpu-cpuid.{feat}"] = "true"
    labels.update(
        {
            "feature.node.kubernetes.io/cpu-hardware_multithreading": "true",
            "feature.node.kubernetes.io/cpu-model.family": "6",
            "feature.node.kubernetes.io/cpu-model.id": "143",
            "feature.node.kubernetes.io/cpu-model.vendor_id": "Intel",
            "feature.node.kubernetes.io/kernel-version.full": "5.15.0-1063-nvidia",
            "feature.node.kubernetes.io/kernel-version.major": "5",
            "feature.node.kubernetes.io/kernel-version.minor": "15",
            "feature.node.kubernetes.io/kernel-version.revision": "0",
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "feature.node.kubernetes.io/pci-15b3.present": "true",
            "feature.node.kubernetes.io/rdma.available": "true",
            "feature.node.kubernetes.io/rdma.capable": "true",
            "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
            "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04",
            "feature.node.kubernetes.io/system-os_release.VERSION_ID.major": "22",
            "feature.node.kubernetes.io/system-os_release.VERSION_ID.minor": "04",
            "kubernetes.io/arch": arch,
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": itype,
            "nvidia.com/cuda.driver-version.full": "570.124.06",
            "nvidia.com/cuda.driver-version.major": "570",
            "nvidia.com/cuda.driver-version.minor": "124",
            "nvidia.com/cuda.driver-version.revision": "06",
            "nvidia.com/cuda.runtime-version.full": "12.8",
            "nvidia.com/cuda.runtime-version.major": "12",
            "nvidia.com/cuda.runtime-version.minor": "8",
            "nvidia.com/gfd.timestamp": str(1760000000 + i),
            "nvidia.com/gpu-driver-upgrade-state": "upgrade-done",
            "nvidia.com/gpu.compute.major": "10" if blackwell else "9",
            "nvidia.com/gpu.compute.minor": "0",
            "nvidia.com/gpu.count": str(gpus),
            "nvidia.com/gpu.deploy.container-toolkit": "true",
            "nvidia.com/gpu.deploy.dcgm": "true",
            "nvidia.com/gpu.deploy.dcgm-exporter": "true",
            "nvidia.com/gpu.deploy.device-plugin": "true",
            "nvidia.com/gpu.deploy.driver": "pre-installed",
            "nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
            "nvidia.com/gpu.deploy.node-status-exporter": "true",
            "nvidia.com/gpu.deploy.operator-validator": "true",
            "nvidia.com/gpu.family": "blackwell" if blackwell else "hopper",
            "nvidia.com/gpu.machine": itype,
            "nvidia.com/gpu.memory": "189471" if grace else "81559",
            "nvidia.com/gpu.mode": "compute",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.replicas": "1",
            "nvidia.com/gpu.sharing-strategy": "none",
            "nvidia.com/mig.capable": "true",
            "nvidia.com/mig.strategy": "single",
            "nvidia.com/mps.capable": "false",
            "topology.kubernetes.io/region": region,
            "topology.kubernetes.io/zone": zone,
        }
    )
    if grace:
        labels["nvidia.com/gpu.clique"] = f"7b968a6d-c8aa-45e1-9e07-e1e51be99c31.{i // 18}"
    labels.update(_platform_labels(platform, i, name))
    labels = dict(sorted(labels.items()))
    ip = f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
    annotations = {
        "alpha.kubernetes.io/provided-node-ip": ip,
        "csi.volume.kubernetes.io/nodeid": f'{{"csi.nvcre.example.com":"{name}"}}',
        "nfd.node.kubernetes.io/feature-labels": ",".join(
            f"cpu-cpuid.{f}" for f in CPU_FEATURES[:12]
        ),
        "node.alpha.kubernetes.io/ttl": "0",
        "nvidia.com/gpu-driver-upgrade-enabled": "true",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    uid = hashlib.sha1(name.encode()).hexdigest()
    spec: dict[str, Any] = {
        "podCIDR": f"172.{16 + (i >> 16) % 16}.{(i >> 8) & 255}.0/24",
        "podCIDRs": [f"172.{16 + (i >> 16) % 16}.{(i >> 8) & 255}.0/24"],
    }
    pid = _provider_id(platform, name, zone, i, rng)
    if pid:
        spec["providerID"] = pid
    roll = rng.random()
    if roll < 0.01:
        spec["taints"] = [
            {
                "effect": "NoSchedule",
                "key": "node.kubernetes.io/unschedulable",
                "timeAdded": "2026-01-10T08:00:00Z",
            }
        ]
        spec["unschedulable"] = True
    elif roll < 0.02:
        spec["taints"] = [{"effect": "NoSchedule", "key": "nvidia.com/gpu.health", "value": "xid"}]
    ready = "False" if 0.02 <= roll < 0.03 else "True"
    alloc: dict[str, Any] = {
        "cpu": "191450m",
        "ephemeral-storage": "27845546346146",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": "2045318920Ki",
        "nvidia.com/gpu": str(gpus),
        "pods": "737",
    }
    nic = _platform(platform).nic_resources[:1]  # its NICs' resource; a "prefix*" names none
    if nic and not nic[0].endswith("*"):
        alloc[nic[0]] = str(nics)
    cap = dict(alloc, cpu="192", memory="2097151216Ki", **{"ephemeral-storage": "30275319404Ki"})
    t0, t1 = "2026-01-02T03:04:05Z", f"2026-02-0{1 + i % 9}T10:{i % 60:02d}:00Z"
    conditions = [
        {
            "lastHeartbeatTime": t1,
            "lastTransitionTime": t0,
            "message": f"kubelet has sufficient {what}",
            "reason": f"KubeletHasSufficient{reason}",
            "status": "False",
            "type": f"{reason}Pressure",
        }
        for what, reason in (("memory available", "Memory"), ("disk space available", "Disk"))
    ]
    conditions.append(
        {
            "lastHeartbeatTime": t1,
            "lastTransitionTime": t0,
            "message": "kubelet has sufficient PID available",
            "reason": "KubeletHasSufficientPID",
            "status": "False",
            "type": "PIDPressure",
        }
    )
    conditions.append(
        {
            "lastHeartbeatTime": t1,
            "lastTransitionTime": t0,
            "message": "kubelet is posting ready status"
            if ready == "True"
            else "container runtime network not ready",
            "reason": "KubeletReady" if ready == "True" else "KubeletNotReady",
            "status": ready,
            "type": "Ready",
        }
    )
    images = []
    for k in range(IMAGES_PER_NODE):
        repo = IMAGES[(i + k) % len(IMAGES)]
        digest = hashlib.sha256(f"{repo}{k}".encode()).hexdigest()
        images.append(
            {
                "names": [f"{repo}@sha256:{digest}", f"{repo}:v{1 + k % 7}.{k % 11}.{k % 3}"],
                "sizeBytes": 10_000_000 + (k * 7_919_993) % 9_000_000_000,
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": annotations,
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": labels,
            "name": name,
            "resourceVersion": str(1_000_000 + i),
            "uid": f"{uid[:8]}-{uid[8:12]}-{uid[12:16]}-{uid[16:20]}-{uid[20:32]}",
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": alloc,
            "capacity": cap,
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {
                "architecture": arch,
                "bootID": f"{_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 12)}",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "5.15.0-1063-nvidia",
                "kubeProxyVersion": "v1.32.4",
                "kubeletVersion": "v1.32.4",
                "machineID": _hex(rng, 32),
                "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.5 LTS",
                "systemUUID": f"{_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 12)}",
            },
        },
    }


def nodes(count: int, seed: int = 0, platform: str = "aws", mixed: bool = False) -> list[Any]:
    """``count`` Nodes; one platform unless ``mixed`` (then round-robin over all of them)."""
    rng = random.Random(seed)
    return [
        node(i, PLATFORMS[i % len(PLATFORMS)] if mixed else platform, rng) for i in range(count)
    ]


WORKLOADRUN = """\
# Fleet health check: NCCL all-reduce across every GPU node, two nodes per job.
- apiVersion: nvcre.nvidia.com/v1alpha1
  kind: WorkloadRun
  metadata:
    name: fleet-allreduce  # one TrainJob per pair of nodes
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'workloadrun.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'workloadrun.yaml'
  spec:
    image: nvcr.io/nvidia/pytorch:26.01-py3
    framework:
      mpi:
        mpirunPath: /usr/local/mpi/bin/mpirun
        binary: /usr/local/bin/all_reduce_perf_mpi
        # message sizes 8 B .. 32 GB, factor 2
        args: ["-b", "8", "-e", "32G", "-f", "2", "-n", "100"]
    numNodes: 2
"""


def write(
    out: Any,
    count: int,
    seed: int,
    platform: str,
    mixed: bool,
    resourcelist: bool,
    as_list: bool,
    stream: bool = False,
    as_json: bool = False,
) -> None:
    """Write the inventory (a ``v1 List``, a ResourceList or a stream) to the text stream ``out``."""
    objs = nodes(count, seed, platform, mixed)
    if as_json:
        import json

        if resourcelist:
            run = yaml.safe_load(WORKLOADRUN)[0]
            doc = {
                "apiVersion": "config.kubernetes.io/v1",
                "kind": "ResourceList",
                "items": [run, *objs],
            }
        else:
            doc = {
                "apiVersion": "v1",
                "items": objs,
                "kind": "List",
                "metadata": {"resourceVersion": ""},
            }
        out.write(json.dumps(doc, indent=4) + "\n")  # as kubectl get -o json writes it
        return
    if stream:
        run_doc = "\n".join(line[2:] for line in WORKLOADRUN.splitlines()[1:]) + "\n"
        out.write(run_doc)
        for o in objs:
            out.write("---\n" + "\n".join(_emit_seq([o], 0))[2:].replace("\n  ", "\n") + "\n")
        return
    if not resourcelist:
        out.write("apiVersion: v1\nitems:\n")
        for o in objs:
            out.write("\n".join(_emit_seq([o], 0)) + "\n")
        out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')
        return
    out.write("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
    out.write(WORKLOADRUN)
    if as_list:
        out.write(
            '- apiVersion: v1\n  kind: List\n  metadata:\n    resourceVersion: ""\n  items:\n'
        )
        for o in objs:
            out.write("\n".join(_emit_seq([o], 2)) + "\n")
    else:
        for idx, o in enumerate(objs):
            o["metadata"]["annotations"].update(
                {
                    "config.kubernetes.io/index": str(idx),
                    "config.kubernetes.io/path": f"nodes/{o['metadata']['name']}.yaml",
                    "internal.config.kubernetes.io/index": str(idx),
                    "internal.config.kubernetes.io/path": f"nodes/{o['metadata']['name']}.yaml",
                }
            )
            out.write("\n".join(_emit_seq([o], 0)) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, required=True, help="number of Nodes")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--out", help="output file (default: stdout)")
    ap.add_argument("--platform", choices=PLATFORMS, default="aws", help="platform of every node")
    ap.add_argument("--mixed", action="store_true", help="nodes of every platform, round-robin")
    ap.add_argument(
        "--resourcelist",
        action="store_true",
        help="wrap the nodes with one MPI WorkloadRun (numNodes: 2) in a KRM ResourceList",
    )
    ap.add_argument(
        "--as-list",
        action="store_true",
        help="with --resourcelist: the nodes as one v1 List item instead of one item each",
    )
    ap.add_argument(
        "--stream",
        action="store_true",
        help="the WorkloadRun, then each Node as its own document (as kustomize passes them "
        "to a legacy exec plugin)",
    )
    ap.add_argument(
        "--json",
        action="store_true",
        help="JSON as kubectl get -o json writes it (a v1 List; with --resourcelist a "
        "ResourceList of the WorkloadRun and the Nodes)",
    )
    args = ap.parse_args(argv)
    if args.out:
        with Path(args.out).open("w", encoding="utf-8") as fh:
            write(
                fh,
                args.nodes,
                args.seed,
                args.platform,
                args.mixed,
                args.resourcelist,
                args.as_list,
                args.stream,
                args.json,
            )
    else:
        write(
            sys.stdout,
            args.nodes,
            args.seed,
            args.platform,
            args.mixed,
            args.resourcelist,
            args.as_list,
            args.stream,
            args.json,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
