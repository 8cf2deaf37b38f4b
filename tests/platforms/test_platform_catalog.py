"""The bundled catalog: it loads, every entry is cited, and the promised pairs are covered."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_fn.platforms.catalog import (
    Catalog,
    CatalogError,
    EnvVar,
    PlatformContext,
    default_node_counts,
    load_catalog,
    make_context,
    resolve,
)
from krm_fn.platforms.detect import PLATFORMS

from ._nodes import make_node

CATALOG_FILE = Path(__file__).resolve().parents[2] / "krm_fn" / "data" / "platforms.yaml"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def ctx_for(
    catalog: Catalog,
    platform: str,
    arch: str,
    framework: str = "mpi",
    instance_type: str | None = None,
    gke_accelerator: str | None = None,
    **counts: int,
) -> PlatformContext:
    labels = {}
    if instance_type:
        labels["node.kubernetes.io/instance-type"] = instance_type
    if gke_accelerator:
        labels["cloud.google.com/gke-accelerator"] = gke_accelerator
    return make_context(
        catalog,
        platform=platform,
        gpu_architecture=arch,
        framework=framework,
        nodes=[make_node("n0", labels=labels)],
        **counts,
    )


def env_of(values: tuple[EnvVar, ...]) -> dict[str, str]:
    return {v.name: v.value for v in values}


# --------------------------------------------------------------------------- loading


def test_bundled_catalog_loads_and_is_cached(catalog: Catalog) -> None:
    assert load_catalog() is catalog
    assert len(catalog.entries) >= 20


def test_explicit_path_loads_the_same_content(catalog: Catalog) -> None:
    assert load_catalog(CATALOG_FILE) == catalog


def test_every_entry_cites_a_source_with_a_commit(catalog: Catalog) -> None:
    for entry in catalog.entries:
        assert entry.source.strip(), entry.name
        assert "@" in entry.source, f"{entry.name}: source names no commit"


def test_every_entry_source_is_also_a_yaml_comment(catalog: Catalog) -> None:
    text = CATALOG_FILE.read_text(encoding="utf-8")
    for entry in catalog.entries:
        before = text.split(f"name: {entry.name}\n", 1)[0]
        last_block = before.rsplit("\n\n", 1)[-1]
        assert "Source" in last_block or "Inferred" in last_block, entry.name


def test_entry_names_are_unique(catalog: Catalog) -> None:
    assert len(set(catalog.names)) == len(catalog.names)


def test_entries_only_name_known_platforms(catalog: Catalog) -> None:
    for entry in catalog.entries:
        assert set(entry.when.platform or ()) <= set(PLATFORMS)


def test_yaml_parses_identically_with_pure_python_loader() -> None:
    import yaml

    text = CATALOG_FILE.read_text(encoding="utf-8")
    assert yaml.load(text, Loader=yaml.SafeLoader) == yaml.load(
        text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )


# --------------------------------------------------------------------------- coverage

# (platform, arch, instance type, GKE accelerator, an entry that must apply)
COVERAGE = [
    ("aws", "a100", "p4d.24xlarge", None, "aws-p4d"),
    ("aws", "h100", "p5.48xlarge", None, "aws-p5"),
    ("aws", "h200", "p5e.48xlarge", None, "aws-p5e"),
    ("aws", "h200", "p5en.48xlarge", None, "aws-p5en"),
    ("aws", "b200", "p6-b200.48xlarge", None, "aws-p6-b200"),
    ("aws", "gb200", "p6e-gb200.36xlarge", None, "aws-p6e-gb200"),
    ("aws", "gb300", "p6e-gb300.36xlarge", None, "aws-gb300-efa-plugin-cleanup"),
    ("gcp", "h100", "a3-highgpu-8g", "nvidia-h100-80gb", "gcp-a3-high-tcpx"),
    ("gcp", "h100", "a3-megagpu-8g", "nvidia-h100-mega-80gb", "gcp-a3-mega-tcpxo"),
    ("gcp", "h200", "a3-ultragpu-8g", "nvidia-h200-141gb", "gcp-a3-ultra"),
    ("gcp", "b200", "a4-highgpu-8g", "nvidia-b200", "gcp-a4"),
    ("gcp", "gb200", "a4x-highgpu-4g", "nvidia-gb200", "gcp-a4x"),
    ("gcp", "gb300", None, "nvidia-gb300", "gcp-a4x-max"),
    ("azure", "h100", "Standard_ND96isr_H100_v5", None, "azure-nd-h100-v5"),
    ("azure", "h200", "Standard_ND96isr_H200_v5", None, "azure-nd-h200-v5"),
    ("azure", "gb200", "Standard_ND128isr_NDR_GB200_v6", None, "azure-nd-gb200-v6"),
    ("azure", "gb300", "Standard_ND128isr_GB300_v6", None, "azure-nd-gb300-v6"),
    ("oci", "h100", "BM.GPU.H100.8", None, "oci-bm-gpu-h100-8"),
    ("oci", "h200", "BM.GPU.H200.8", None, "oci-bm-gpu-h200-b200-8"),
    ("oci", "b200", "BM.GPU.B200.8", None, "oci-bm-gpu-h200-b200-8"),
    ("oci", "gb200", "BM.GPU.GB200.4", None, "oci-bm-gpu-gb200-4"),
    ("coreweave", "h100", None, None, "coreweave-infiniband-hgx"),
    ("coreweave", "b200", None, None, "coreweave-infiniband-hgx"),
    ("coreweave", "gb200", None, None, "coreweave-gb200-nvl72"),
    ("onprem", "h100", None, None, "onprem-infiniband"),
    ("onprem", "gb300", None, None, "onprem-grace-blackwell"),
]


@pytest.mark.parametrize("framework", ["mpi", "torch"])
@pytest.mark.parametrize(
    ("platform", "arch", "instance_type", "accelerator", "expected"),
    COVERAGE,
    ids=[f"{c[0]}-{c[1]}-{c[2] or c[3] or 'any'}" for c in COVERAGE],
)
def test_covered_pair_matches_its_entry(
    catalog: Catalog,
    platform: str,
    arch: str,
    instance_type: str | None,
    accelerator: str | None,
    expected: str,
    framework: str,
) -> None:
    overlay = resolve(
        catalog, ctx_for(catalog, platform, arch, framework, instance_type, accelerator)
    )
    assert expected in overlay.applied


@pytest.mark.parametrize(
    ("platform", "arch"), sorted({(c[0], c[1]) for c in COVERAGE}), ids=lambda v: str(v)
)
def test_covered_pair_resolves_without_shape_labels(
    catalog: Catalog, platform: str, arch: str
) -> None:
    """Offline preview (`render --platform P --gpu-arch A`) has synthetic nodes without shape labels."""
    overlay = resolve(catalog, ctx_for(catalog, platform, arch))
    assert overlay.applied


# --------------------------------------------------------------------------- selected values


def test_aws_p5_requests_32_efa_as_integers(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "aws", "h100", instance_type="p5.48xlarge"))
    assert overlay.resources == {
        "limits": {"vpc.amazonaws.com/efa": 32},
        "requests": {"vpc.amazonaws.com/efa": 32},
    }
    assert overlay.nic_resource_name == "vpc.amazonaws.com/efa"
    assert env_of(overlay.forward_env)["FI_PROVIDER"] == "efa"
    assert overlay.mpi_args[:6] == ("--bind-to", "none", "--mca", "pml", "^ucx", "--mca")
    assert overlay.security_context == {"capabilities": {"add": ["IPC_LOCK"]}}


@pytest.mark.parametrize(
    ("arch", "instance_type", "efa"),
    [
        ("a100", "p4de.24xlarge", 4),
        ("h200", "p5e.48xlarge", 32),
        ("h200", "p5en.48xlarge", 16),
        ("b200", "p6-b200.48xlarge", 8),
        ("gb200", "p6e-gb200.36xlarge", 4),
        ("h200", None, 32),
    ],
)
def test_aws_efa_count_follows_the_instance_type(
    catalog: Catalog, arch: str, instance_type: str | None, efa: int
) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "aws", arch, instance_type=instance_type))
    assert overlay.resources["limits"]["vpc.amazonaws.com/efa"] == efa


def test_spec_nic_count_overrides_and_zero_drops_the_request(catalog: Catalog) -> None:
    ctx = ctx_for(catalog, "aws", "h100", instance_type="p5.48xlarge", nics_per_node=16)
    assert resolve(catalog, ctx).resources["limits"] == {"vpc.amazonaws.com/efa": 16}
    ctx = ctx_for(catalog, "azure", "h100", nics_per_node=0)
    assert resolve(catalog, ctx).resources == {}


def test_aws_gb200_has_no_pml_and_partitions_by_network_node(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "aws", "gb200"))
    assert "^ucx" not in overlay.mpi_args
    assert overlay.topology_key == "topology.k8s.aws/network-node-layer-1"


def test_aws_gb300_transport_pins_are_mpi_only(catalog: Catalog) -> None:
    mpi = resolve(catalog, ctx_for(catalog, "aws", "gb300", "mpi"))
    torch = resolve(catalog, ctx_for(catalog, "aws", "gb300", "torch"))
    assert env_of(mpi.forward_env)["NCCL_IB_GID_INDEX"] == "3"
    assert "NCCL_IB_GID_INDEX" not in env_of(torch.env)
    assert (
        mpi.pre_command
        == torch.pre_command
        == (
            "rm -rf /opt/amazon",
            "unset NCCL_NET_PLUGIN",
            "unset NCCL_TUNER_PLUGIN",
            "unset AWS_OFI_NCCL_VERSION",
        )
    )
    assert "vpc.amazonaws.com/efa" not in mpi.resources.get("limits", {})


def test_gcp_h100_shapes_do_not_mix_tcpx_and_tcpxo(catalog: Catalog) -> None:
    high = resolve(catalog, ctx_for(catalog, "gcp", "h100", gke_accelerator="nvidia-h100-80gb"))
    mega = resolve(
        catalog, ctx_for(catalog, "gcp", "h100", gke_accelerator="nvidia-h100-mega-80gb")
    )
    preview = resolve(catalog, ctx_for(catalog, "gcp", "h100"))
    assert high.applied == ("gcp-a3-high-tcpx",)
    assert not any(v.name.startswith("NCCL_FASTRAK") for v in high.forward_env)
    assert mega.applied == preview.applied == ("gcp-a3-mega-tcpxo",)
    assert env_of(mega.forward_env)["NCCL_NVLSTREE_MAX_CHUNKSIZE"] == "131072"
    assert "networking.gke.io/interfaces" in mega.pod_annotations


def test_gcp_mixed_h100_shapes_match_no_shape_entry(catalog: Catalog) -> None:
    nodes = [
        make_node("a", labels={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}),
        make_node("b", labels={"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}),
    ]
    ctx = make_context(
        catalog, platform="gcp", gpu_architecture="h100", framework="mpi", nodes=nodes
    )
    assert resolve(catalog, ctx).applied == ()


def test_gcp_a4x_tolerates_arm64_and_uses_gib(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "gcp", "gb200", "torch"))
    assert overlay.applied == ("gcp-gib", "gcp-a4x")
    assert [t["key"] for t in overlay.tolerations] == ["nvidia.com/gpu", "kubernetes.io/arch"]
    assert env_of(overlay.env)["NCCL_NET"] == "gIB"
    assert overlay.mpi_args == ()
    assert overlay.pre_command[0].startswith("export LD_LIBRARY_PATH=")
    assert {m["mountPath"] for m in overlay.volume_mounts} == {
        "/usr/local/gib",
        "/usr/local/nvidia",
    }
    assert overlay.topology_key == "cloud.google.com/gce-topology-block"


def test_azure_h100_requests_rdma_ib_per_nic(catalog: Catalog) -> None:
    overlay = resolve(
        catalog, ctx_for(catalog, "azure", "h100", instance_type="Standard_ND96isr_H100_v5")
    )
    assert overlay.resources["limits"] == {"rdma/ib": 8}
    assert env_of(overlay.forward_env)["NCCL_MIN_NCHANNELS"] == "32"


def test_azure_nc_h100_without_infiniband_gets_nothing(catalog: Catalog) -> None:
    overlay = resolve(
        catalog, ctx_for(catalog, "azure", "h100", instance_type="Standard_NC40ads_H100_v5")
    )
    assert overlay.applied == ()


def test_azure_gb300_uses_four_nics_and_ppg(catalog: Catalog) -> None:
    ctx = ctx_for(catalog, "azure", "gb300")
    assert (ctx.gpus_per_node, ctx.nics_per_node) == (4, 4)
    overlay = resolve(catalog, ctx)
    assert overlay.resources["requests"] == {"rdma/ib": 4}
    assert overlay.topology_key == "kubernetes.azure.com/ppg"
    assert overlay.mpi_args[-2:] == ("--bind-to", "none")


def test_oci_gb200_mounts_devices_without_nic_resource(catalog: Catalog) -> None:
    ctx = ctx_for(catalog, "oci", "gb200", instance_type="BM.GPU.GB200.4")
    assert ctx.nics_per_node == 0
    overlay = resolve(catalog, ctx)
    assert overlay.resources == {}
    assert overlay.security_context == {"privileged": True, "capabilities": {"add": ["IPC_LOCK"]}}
    assert overlay.volume_mounts == ({"name": "oci-devinf", "mountPath": "/dev/infiniband"},)
    assert env_of(overlay.forward_env)["NCCL_NET_PLUGIN"] == "sys"


def test_oci_gb200_v3_uses_its_own_entry(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "oci", "gb200", instance_type="BM.GPU.GB200-v3.4"))
    assert "oci-bm-gpu-gb200-4" not in overlay.applied
    assert env_of(overlay.forward_env)["NCCL_NET_PLUGIN"] == "none"


def test_oci_h100_hca_list_has_16_devices(catalog: Catalog) -> None:
    hca = env_of(resolve(catalog, ctx_for(catalog, "oci", "h100")).forward_env)["NCCL_IB_HCA"]
    assert hca.startswith("=") and len(hca[1:].split(",")) == 16


def test_coreweave_gb200_limits_only(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "coreweave", "gb200"))
    assert overlay.resources == {"limits": {"rdma/ib": 1}}
    assert env_of(overlay.forward_env)["NCCL_SHM_DISABLE"] == "0"
    assert overlay.topology_key == "topology.kubernetes.io/zone"


def test_onprem_generic_requests_no_resources(catalog: Catalog) -> None:
    for arch in ("h100", "unknown", "l40s"):
        overlay = resolve(catalog, ctx_for(catalog, "onprem", arch))
        assert overlay.applied == ("onprem-infiniband",)
        assert overlay.resources == {}
        assert overlay.volumes == ()


def test_togetherai_nic_count_is_a_string(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "togetherai", "h100"))
    assert overlay.resources["limits"] == {"nvidia.com/mlnxnics": "8"}


def test_forge_has_no_overrides(catalog: Catalog) -> None:
    assert resolve(catalog, ctx_for(catalog, "forge", "gb200")).applied == ()


def test_default_node_counts_reports_provenance(catalog: Catalog) -> None:
    counts = default_node_counts(
        catalog,
        platform="aws",
        gpu_architecture="h200",
        framework="mpi",
        instance_types=frozenset({"p5en.48xlarge"}),
    )
    assert (counts.gpus_per_node, counts.gpus_from) == (8, "gpu-defaults")
    assert (counts.nics_per_node, counts.nics_from) == (16, "aws-p5en")
    spec = default_node_counts(
        catalog,
        platform="aws",
        gpu_architecture="h200",
        framework="mpi",
        gpus_per_node=4,
        nics_per_node=0,
    )
    assert (spec.gpus_per_node, spec.gpus_from, spec.nics_per_node, spec.nics_from) == (
        4,
        "spec",
        0,
        "spec",
    )
    assert not spec.mnnvl


def test_make_context_normalises_the_architecture(catalog: Catalog) -> None:
    ctx = make_context(
        catalog, platform="oci", gpu_architecture="NVIDIA-GB200-NVL72", framework="torch"
    )
    assert ctx.gpu_architecture == "gb200"
    assert ctx.instance_types == frozenset()


# --------------------------------------------------------------------------- invalid catalogs


def test_missing_file_is_a_catalog_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot read"):
        load_catalog(tmp_path / "nope.yaml")


def test_custom_file_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("version: 1\nentries:\n  - {name: x, source: s @ 1, topologyKey: k}\n")
    assert load_catalog(path).names == ("x",)
