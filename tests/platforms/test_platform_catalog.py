"""The bundled catalog: it loads, every entry is cited, and the promised pairs are covered."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_fn.platforms.catalog import Catalog, CatalogError, load_catalog
from krm_fn.platforms.detect import PLATFORMS
from krm_fn.platforms.overlay import (
    EnvVar,
    PlatformContext,
    make_context,
    resolve,
)

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


def test_the_bundled_file_named_again_as_a_site_catalog_is_refused_naming_each_clash() -> None:
    with pytest.raises(CatalogError) as info:
        load_catalog([CATALOG_FILE])
    problems = info.value.problems
    assert (
        "platform 'aws': the table already has a platform of that name; choose another name, or add entries with when.platform: aws"
        in problems
    )
    assert (
        "entry 'gb200-gb300-compute-domain': the table already has an entry of that name; choose another name"
        in problems
    )
    assert any(
        p.startswith("field 'gpus': GPU models come with the bundled table") for p in problems
    )


def test_every_entry_cites_nvcre_o1_with_its_logical_index(catalog: Catalog) -> None:
    for entry in catalog.entries:
        assert entry.source.startswith(
            "NVIDIA/cluster-readiness-engine pkg/platform/overrides/workloadrun.yaml @ f81ff7af (L"
        ), entry.name
        assert entry.source.count("@") >= 1, f"{entry.name}: source names no commit"


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


# --------------------------------------------------------------------------- NVCRE parity
# NVCRE's WorkloadRun override table, O1 @ f81ff7af, as written in
# shared/reference/nvcre-workloadrun.md section 2.9: (logical index, platform, architectures,
# framework gate). "non-mpi" is O1's {{ if ne .FrameworkType "mpi" }}. Independent of the
# catalog file: the test compares which of O1's entries the catalog applies.
GB = {"gb200", "gb300"}
NVCRE_O1: list[tuple[int, str | None, set[str] | None, str | None]] = [
    (0, None, GB, None),
    (1, "aws", GB, None),
    (2, "gcp", GB, None),
    (3, "azure", GB, None),
    (4, "aws", {"gb300"}, None),
    (5, "aws", {"gb300"}, "mpi"),
    (6, "aws", {"gb300"}, "mpi"),
    (7, "aws", {"gb200"}, None),
    (8, "aws", {"gb200"}, None),
    (9, "aws", {"gb300"}, None),
    (10, "aws", {"h100"}, None),
    (11, "aws", {"h100"}, None),
    (12, "gcp", {"h100"}, None),
    (13, "gcp", GB, None),
    (14, "azure", None, None),
    (15, "togetherai", None, None),
    (16, "togetherai", None, "non-mpi"),
    (17, "mistral", {"gb300"}, None),
    (18, "mistral", {"gb300"}, "non-mpi"),
    (19, "onprem", GB, None),
    (20, "onprem", GB, "non-mpi"),
    (21, "onprem", {"b200", "b300"}, None),
    (22, "gcp", {"rtxpro6000"}, None),
    (23, "nscale", {"b200", "gb300"}, None),
    (24, "nscale", {"b200", "gb300"}, None),
]


def _logical_index(source: str) -> int:
    return int(source.split("(L", 1)[1].split(")", 1)[0])


def _nvcre_applies(platform: str, arch: str, framework: str) -> list[int]:
    out = []
    for index, plat, archs, gate in NVCRE_O1:
        if plat is not None and plat != platform:
            continue
        if archs is not None and arch not in archs:
            continue
        if (gate == "mpi" and framework != "mpi") or (gate == "non-mpi" and framework == "mpi"):
            continue
        out.append(index)
    return out


@pytest.mark.parametrize("framework", ["mpi", "torch", "exec"])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_catalog_applies_exactly_nvcre_o1_entries_in_order(
    catalog: Catalog, platform: str, framework: str
) -> None:
    from krm_fn.platforms.gpu import GPU_ARCHITECTURES

    for arch in (*GPU_ARCHITECTURES, "unknown"):
        overlay = resolve(catalog, ctx_for(catalog, platform, arch, framework))
        sources = {e.name: e.source for e in catalog.entries}
        got = [_logical_index(sources[n]) for n in overlay.applied]
        assert got == _nvcre_applies(platform, arch, framework), (platform, arch, framework)


def test_aws_gb300_mpi_args_are_nvcre_golden_order(catalog: Catalog) -> None:
    # GL-gb300 (cmd/integration/testdata/reconcile/workloadrun-mpi-aws-gb300/expected.json, as
    # quoted in the reference section 2.8): transport pins, their -x env, then L5's -x, because
    # each matching entry's mpiArgs are prepended.
    overlay = resolve(catalog, ctx_for(catalog, "aws", "gb300", "mpi"))
    assert list(overlay.mpi_args) == [
        *("--mca", "orte_keep_fqdn_hostnames", "true", "--mca", "pml", "ob1"),
        *("--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "eth0"),
        *("--mca", "oob", "tcp", "--mca", "oob_tcp_if_include", "eth0"),
        *("--mca", "coll_ucc_enable", "0", "--mca", "coll_hcoll_enable", "0"),
        *("-x", "NCCL_DEBUG_SUBSYS=NET,INIT", "-x", "NCCL_SOCKET_IFNAME=eth0"),
        *("-x", "NCCL_IB_GID_INDEX=3", "-x", "NCCL_NVLS_ENABLE=1", "-x", "NCCL_CUMEM_ENABLE=1"),
        *("-x", "NCCL_NET_GDR_C2C=1", "-x", "NCCL_NET_PLUGIN=none"),
    ]
    assert list(overlay.pre_command) == [
        "rm -rf /opt/amazon",
        "unset NCCL_NET_PLUGIN",
        "unset NCCL_TUNER_PLUGIN",
        "unset AWS_OFI_NCCL_VERSION",
    ]
    assert overlay.compute_domain
    (roce,) = overlay.claim_templates
    assert (roce.claim, roce.suffix, roce.device_class, roce.count) == (
        "roce-channel",
        "roce",
        "roce.networking.k8s.aws",
        8,
    )
    assert overlay.topology_key == "topology.k8s.aws/network-node-layer-1"


def test_aws_gb300_torch_gets_no_transport_pins(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "aws", "gb300", "torch"))
    assert overlay.mpi_args == () and overlay.trainer_env == ()
    assert len(overlay.pre_command) == 4


@pytest.mark.parametrize(
    ("arch", "efa"), [("gb200", 4), ("h100", 32)], ids=["gb200-4-efa", "h100-32-efa"]
)
def test_aws_efa_mpi_forwards_fi_vars_torch_sets_trainer_env(
    catalog: Catalog, arch: str, efa: int
) -> None:
    fi = [("FI_PROVIDER", "efa"), ("FI_EFA_USE_DEVICE_RDMA", "1"), ("FI_EFA_FORK_SAFE", "1")]
    mpi = resolve(catalog, ctx_for(catalog, "aws", arch, "mpi"))
    assert list(mpi.mpi_args) == [x for n, v in fi for x in ("-x", f"{n}={v}")]  # GL-mpi
    assert mpi.trainer_env == ()
    torch = resolve(catalog, ctx_for(catalog, "aws", arch, "torch"))
    assert [(e.name, e.value) for e in torch.trainer_env] == fi  # GL-unp (h100 torch)
    assert torch.mpi_args == ()
    for overlay in (mpi, torch):
        assert overlay.resources == {
            "limits": {"vpc.amazonaws.com/efa": efa},
            "requests": {"vpc.amazonaws.com/efa": efa},
        }
        assert overlay.security_context == {"capabilities": {"add": ["IPC_LOCK"]}}


@pytest.mark.parametrize("arch", ["a100", "h200", "b200"])
def test_aws_other_gpus_get_nothing_from_nvcre(catalog: Catalog, arch: str) -> None:
    assert resolve(catalog, ctx_for(catalog, "aws", arch, "mpi")).applied == ()


def test_azure_requests_mlnxnics_as_integer_and_nothing_at_zero(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "azure", "h100", "mpi"))
    assert overlay.resources["limits"] == {"nvidia.com/mlnxnics": 8}
    zero = resolve(catalog, ctx_for(catalog, "azure", "h100", "mpi", nics_per_node=0))
    assert zero.applied == ("azure-mlnxnics",) and zero.resources == {}


def test_togetherai_nic_count_is_a_string_and_env_is_torch_only(catalog: Catalog) -> None:
    mpi = resolve(catalog, ctx_for(catalog, "togetherai", "h100", "mpi", nics_per_node=8))
    assert mpi.resources["requests"] == {"nvidia.com/mlnxnics": "8"}
    assert mpi.trainer_env == () and mpi.mpi_args == ()
    torch = resolve(catalog, ctx_for(catalog, "togetherai", "h100", "torch"))
    assert env_of(torch.trainer_env)["NCCL_IB_HCA"].count("mlx5_") == 12


def test_gcp_gb200_roce_networks_annotations_env_and_tolerations(catalog: Catalog) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "gcp", "gb200", "mpi"))
    assert overlay.pod_annotations["networking.gke.io/default-interface"] == "eth0"
    assert overlay.pod_annotations["networking.gke.io/interfaces"] == (
        "[\n"
        '  {"interfaceName":"eth0","network":"default"},\n'
        '  {"interfaceName":"rdma0","network":"rdma-0"},\n'
        '  {"interfaceName":"rdma1","network":"rdma-1"},\n'
        '  {"interfaceName":"rdma2","network":"rdma-2"},\n'
        '  {"interfaceName":"rdma3","network":"rdma-3"}\n'
        "]\n"
    )
    assert overlay.resources["limits"] == {
        f"networking.gke.io.networks/rdma-{i}": "1" for i in range(4)
    }
    assert env_of(overlay.env) == {"NCCL_NET_GDR_LEVEL": "5", "NCCL_DEBUG": "INFO"}
    assert [t["key"] for t in overlay.tolerations] == ["kubernetes.io/arch", "nvidia.com/gpu"]
    assert overlay.topology_key == "cloud.google.com/gce-topology-block"


def test_gcp_h100_fastrak_env_is_trainer_env_for_every_framework(catalog: Catalog) -> None:
    for framework in ("mpi", "torch"):
        overlay = resolve(catalog, ctx_for(catalog, "gcp", "h100", framework))
        env = env_of(overlay.trainer_env)
        assert env["NCCL_PROTO"] == "Simple,LL128" and env["NCCL_NVLS_ENABLE"] == "0"
        assert "NCCL_ALGO" not in env and len(env) == 29
        assert overlay.mpi_args == ()


@pytest.mark.parametrize(
    ("gpus", "level"), [(8, "SYS"), (4, "PHB"), (2, "PHB"), (1, None)], ids=str
)
def test_gcp_rtxpro6000_p2p_level_follows_gpus_per_node(
    catalog: Catalog, gpus: int, level: str | None
) -> None:
    torch = resolve(catalog, ctx_for(catalog, "gcp", "rtxpro6000", "torch", gpus_per_node=gpus))
    assert env_of(torch.trainer_env).get("NCCL_P2P_LEVEL") == level
    mpi = resolve(catalog, ctx_for(catalog, "gcp", "rtxpro6000", "mpi", gpus_per_node=gpus))
    assert (f"NCCL_P2P_LEVEL={level}" in mpi.mpi_args) == (level is not None)


@pytest.mark.parametrize("mnnvl", [True, False], ids=["mnnvl-on", "mnnvl-off"])
def test_onprem_and_mistral_mnnvl_env_follows_enable_mnnvl(catalog: Catalog, mnnvl: bool) -> None:
    for platform in ("onprem", "mistral"):
        ctx = make_context(
            catalog, platform=platform, gpu_architecture="gb300", framework="torch", mnnvl=mnnvl
        )
        overlay = resolve(catalog, ctx)
        for env in (overlay.env, overlay.trainer_env):
            assert env_of(env)["NCCL_MNNVL_ENABLE"] == ("1" if mnnvl else "0"), platform


def test_nscale_claims_gpus_and_nics_and_deletes_the_device_plugin_request(
    catalog: Catalog,
) -> None:
    overlay = resolve(catalog, ctx_for(catalog, "nscale", "gb300", "mpi"))
    assert [(c.claim, c.device_class, c.count) for c in overlay.claim_templates] == [
        ("gpu", "gpu.nvidia.com", 4),
        ("rdma", "rdma.nscale.com", 4),  # gpu-defaults: nscale gb300 mlnxPerNode 4
    ]
    assert overlay.resources == {
        "limits": {"nvidia.com/gpu": None},
        "requests": {"nvidia.com/gpu": None},
    }
    assert "NCCL_IB_PCI_RELAXED_ORDERING=1" in overlay.mpi_args
    no_nics = resolve(catalog, ctx_for(catalog, "nscale", "b200", "mpi", nics_per_node=0))
    assert [c.claim for c in no_nics.claim_templates] == ["gpu"]


@pytest.mark.parametrize("platform", ["oci", "forge", "coreweave"])
def test_platforms_without_nvcre_overrides_get_only_the_compute_domain(
    catalog: Catalog, platform: str
) -> None:
    assert resolve(catalog, ctx_for(catalog, platform, "h100", "mpi")).applied == ()
    gb = resolve(catalog, ctx_for(catalog, platform, "gb200", "mpi"))
    assert gb.applied == ("gb200-gb300-compute-domain",)


def test_node_counts_come_with_their_provenance(catalog: Catalog) -> None:
    ctx = make_context(catalog, platform="aws", gpu_architecture="h200", framework="mpi")
    assert (ctx.gpus_per_node, ctx.nics_per_node, ctx.gpus_from) == (8, 8, "gpu-defaults")
    spec = make_context(
        catalog,
        platform="aws",
        gpu_architecture="h200",
        framework="mpi",
        gpus_per_node=4,
        nics_per_node=0,
    )
    assert (spec.gpus_per_node, spec.gpus_from, spec.nics_per_node) == (4, "spec", 0)
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
        load_catalog([tmp_path / "nope.yaml"])


def test_custom_file_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("version: 1\nentries:\n  - {name: x, source: s @ 1, topologyKey: k}\n")
    assert load_catalog([path]).names == (*load_catalog().names, "x")
