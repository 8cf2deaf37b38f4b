from __future__ import annotations

from typing import Any, cast

import pytest

from krm_fn.platforms.detect import (
    PLATFORMS,
    check_platform_name,
    detect_fleet_platform,
    distinct_label_values,
)

from ._nodes import make_node

AZURE_VMSS = (
    "azure:///subscriptions/0000/resourceGroups/mc_rg/providers/Microsoft.Compute/"
    "virtualMachineScaleSets/aks-gpu-12345678-vmss/virtualMachines/0"
)

PROVIDER_CASES = [
    pytest.param(
        make_node("n", "aws:///us-east-1a/i-0123456789abcdef0"), "aws", id="aws-scheme-maps-to-aws"
    ),
    pytest.param(
        make_node("n", "aws:////i-0123456789abcdef0"),
        "aws",
        id="aws-scheme-without-zone-maps-to-aws",
    ),
    pytest.param(
        make_node("n", "gce://my-project/us-central1-a/gke-a3-node-1"), "gcp", id="gce-maps-to-gcp"
    ),
    pytest.param(make_node("n", AZURE_VMSS), "azure", id="azure-vmss-maps-to-azure"),
    pytest.param(
        make_node("n", "ocid1.instance.oc1.iad.anuwcljrexample"), "oci", id="bare-ocid-maps-to-oci"
    ),
    pytest.param(
        make_node("n", "oci://ocid1.instance.oc1.iad.anuwcljrexample"),
        "oci",
        id="oci-scheme-maps-to-oci",
    ),
    pytest.param(
        make_node("n", "openstack:///f1e2d3", allocatable={"nscale.com/rdmashare": "8"}),
        "nscale",
        id="openstack-with-rdmashare-maps-to-nscale",
    ),
    pytest.param(
        make_node("n", "openstack:///f1e2d3", allocatable={"nvidia.com/gpu": "8"}),
        "onprem",
        id="openstack-without-rdmashare-maps-to-onprem",
    ),
    pytest.param(
        make_node("n", "openstack:///f1e2d3", labels={"nscale.com/rdmashare": "8"}),
        "onprem",
        id="openstack-rdmashare-as-label-is-not-nscale",
    ),
    pytest.param(
        make_node("n", "kubevirt://vm-1", labels={"node-role.together.ai/worker": ""}),
        "togetherai",
        id="kubevirt-with-together-worker-label-maps-to-togetherai",
    ),
    pytest.param(
        make_node("n", "kubevirt://vm-1"), "onprem", id="kubevirt-without-label-maps-to-onprem"
    ),
    pytest.param(make_node("n", "metal3://ns/bmh-1/m-1"), "mistral", id="metal3-maps-to-mistral"),
    pytest.param(
        make_node("n", "", labels={"kubernetes.io/hostname": "gb200-forge-rack1-n01"}),
        "onprem",
        id="a-hostname-containing-forge-does-not-decide-the-platform",
    ),
    pytest.param(
        make_node(
            "n",
            "",
            labels={"kubernetes.io/hostname": "gb200-forge-1", "nke.nvidia.com/site-name": "s"},
        ),
        "forge",
        id="forge-site-label-decides-whatever-the-hostname",
    ),
    pytest.param(make_node("n", "nscale://gpu-1"), "nscale", id="nscale-scheme-maps-to-nscale"),
    pytest.param(
        make_node("n", None, labels={"nke.nvidia.com/site-name": "site-a"}),
        "forge",
        id="missing-provider-with-nke-site-label-maps-to-forge",
    ),
    pytest.param(
        make_node(
            "n", "kind://docker/kind/forge-worker", labels={"kubernetes.io/hostname": "forge-1"}
        ),
        "onprem",
        id="forge-hostname-ignored-when-provider-id-is-set",
    ),
    pytest.param(make_node("n", ""), "onprem", id="empty-provider-without-hints-maps-to-onprem"),
    pytest.param(
        make_node("n", "kind://docker/kind/kind-worker"), "onprem", id="kind-maps-to-onprem"
    ),
    pytest.param(make_node("n", "k3s://node-1"), "onprem", id="k3s-maps-to-onprem"),
    pytest.param(
        make_node("n", "equinixmetal://abc"), "onprem", id="unknown-scheme-maps-to-onprem"
    ),
    pytest.param(
        make_node("n", "AWS:///us-east-1a/i-1"), "onprem", id="scheme-match-is-case-sensitive"
    ),
    pytest.param(
        make_node("n", "", labels={"node.coreweave.cloud/type": "gd-8xh100ib-i128"}),
        "coreweave",
        id="coreweave-type-label-maps-to-coreweave",
    ),
    pytest.param(
        make_node("n", "", labels={"ds.coreweave.com/nvlink.domain": "rack-7"}),
        "coreweave",
        id="coreweave-nvlink-domain-label-maps-to-coreweave",
    ),
    pytest.param(
        make_node("n", "coreweave://g1"), "coreweave", id="coreweave-scheme-maps-to-coreweave"
    ),
    pytest.param(
        make_node("n", "metal3://a/b/c", labels={"node.coreweave.cloud/type": "b200-8x"}),
        "coreweave",
        id="coreweave-label-beats-generic-schemes",
    ),
    pytest.param(
        make_node("n", "aws:///us-east-1a/i-1", labels={"node.coreweave.cloud/type": "x"}),
        "aws",
        id="cloud-provider-id-beats-coreweave-label",
    ),
    pytest.param({}, "onprem", id="empty-dict-maps-to-onprem"),
    pytest.param(
        {"metadata": None, "spec": None, "status": None}, "onprem", id="null-sections-map-to-onprem"
    ),
    pytest.param(
        {"metadata": {"labels": None}, "spec": {"providerID": 42}},
        "onprem",
        id="non-string-provider-id-maps-to-onprem",
    ),
]


@pytest.mark.parametrize(("node", "expected"), PROVIDER_CASES)
def test_detect_platform(node: dict[str, Any], expected: str) -> None:
    assert detect_fleet_platform([node]).platform == expected


def test_every_detected_platform_is_listed() -> None:
    results = {
        detect_fleet_platform([cast(dict[str, Any], case.values[0])]).platform
        for case in PROVIDER_CASES
    }
    assert results <= set(PLATFORMS)
    assert set(PLATFORMS) == results


def test_platform_names_are_sorted() -> None:
    assert list(PLATFORMS) == sorted(PLATFORMS)


def test_fleet_of_one_platform() -> None:
    nodes = [make_node(f"gpu-{i}", f"aws:///us-east-1a/i-{i}") for i in (2, 1)]
    result = detect_fleet_platform(nodes)
    assert result.error is None
    assert result.platform == "aws"


def test_empty_fleet_is_onprem() -> None:
    result = detect_fleet_platform([])
    assert result.error is None
    assert result.platform == "onprem"


def test_mixed_fleet_error_lists_platforms_and_up_to_three_nodes() -> None:
    nodes = [make_node(f"aws-{i}", f"aws:///z/i-{i}") for i in range(5)]
    nodes += [make_node("gke-a", "gce://p/z/a"), make_node("bare-1", "")]
    result = detect_fleet_platform(reversed(nodes))
    assert result.error is not None
    assert result.platform is None
    assert result.error == (
        "heterogeneous platforms detected: "
        "aws: 5 nodes (aws-0, aws-1, aws-2 and 2 more); "
        "gcp: 1 node (gke-a); "
        "onprem: 1 node (bare-1); "
        "every eligible node must be on the same platform"
    )


def test_mixed_fleet_message_is_independent_of_order() -> None:
    nodes = [make_node("b", "gce://p/z/b"), make_node("a", "aws:///z/i-a"), make_node("c", "")]
    assert detect_fleet_platform(nodes).error == detect_fleet_platform(nodes[::-1]).error


def test_check_platform_name_accepts_known_names() -> None:
    assert check_platform_name(" AWS ") == "aws"
    assert check_platform_name("coreweave") == "coreweave"


def test_check_platform_name_refuses_unknown_with_sorted_list() -> None:
    with pytest.raises(ValueError) as info:
        check_platform_name("gce")
    assert str(info.value) == (
        "unknown platform 'gce': must be one of aws, azure, coreweave, forge, gcp, mistral, "
        "nscale, oci, onprem, togetherai"
    )


def test_shape_label_helpers() -> None:
    nodes = [
        make_node("a", labels={"node.kubernetes.io/instance-type": "p5.48xlarge"}),
        make_node("b", labels={"node.kubernetes.io/instance-type": "p5.48xlarge"}),
        make_node("c", labels={"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}),
        make_node("d", labels={"node.kubernetes.io/instance-type": ""}),
    ]
    itype, gke = "node.kubernetes.io/instance-type", "cloud.google.com/gke-accelerator"
    assert distinct_label_values(nodes, itype) == frozenset({"p5.48xlarge"})
    assert distinct_label_values(nodes, gke) == frozenset({"nvidia-h100-mega-80gb"})
    assert distinct_label_values([], itype) == frozenset()
