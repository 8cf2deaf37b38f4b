from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krm_fn.platforms.catalog import GpuDefaults, bundled
from krm_fn.platforms.gpu import (
    GPU_ARCHITECTURES,
    check_gpu_arch_name,
    detect_gpu_architecture,
    gke_accelerator_model,
    gpu_model,
    gpu_product_label_value,
    parse_gpu_product,
)

from ._nodes import make_node

PRODUCT_CASES = [
    ("NVIDIA-H100-80GB-HBM3", "h100"),
    ("NVIDIA-H100-NVL", "h100"),
    ("NVIDIA-H100-PCIe", "h100"),
    ("NVIDIA-A100-SXM4-40GB", "a100"),
    ("NVIDIA-A100-SXM4-40G", "a100"),
    ("A100-SXM4-40GB", "a100"),
    ("NVIDIA-GB200-NVL72", "gb200"),
    ("NVIDIA-GB200", "gb200"),
    ("NVIDIA-GB300", "gb300"),
    ("NVIDIA-GB300-NVL72", "gb300"),
    ("NVIDIA-H200-141GB", "h200"),
    ("NVIDIA-H200", "h200"),
    ("NVIDIA-H200-NVL", "h200"),
    ("NVIDIA-B200", "b200"),
    ("NVIDIA-B300-SXM6-AC", "b300"),
    ("NVIDIA-L40", "l40"),
    ("NVIDIA-L40S", "l40s"),
    ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "rtxpro6000"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtxpro6000"),
    ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "h100"),
    ("A100-SXM4-40GB-MIG-1g.5gb", "a100"),
    ("A100-SXM4-40GB-MIG-1g.5gb-SHARED", "a100"),
    ("NVIDIA-H100-80GB-HBM3-SHARED", "h100"),
    ("NVIDIA-GB200-SHARED", "gb200"),
    ("NVIDIA GB300", "gb300"),
    ("NVIDIA H100 80GB HBM3", "h100"),
    ("nvidia-gb300-nvl72", "gb300"),
    ("  NVIDIA-L40S  ", "l40s"),
    ("NVIDIA_H200_141GB", "h200"),
    ("gb300", "gb300"),
    ("H100", "h100"),
    ("rtxpro6000", "rtxpro6000"),
    ("NVIDIA-Graphics-Device", "unknown"),
    ("NVIDIA-RTX-6000-Ada-Generation", "unknown"),
    ("Tesla-T4", "unknown"),
    ("NVIDIA-GH200-480GB", "unknown"),
    ("NVIDIA", "unknown"),
    ("", "unknown"),
    ("---", "unknown"),
    ("unknown", "unknown"),
]


@pytest.mark.parametrize(
    ("product", "arch"), PRODUCT_CASES, ids=[c[0] or "<empty>" for c in PRODUCT_CASES]
)
def test_parse_gpu_product(product: str, arch: str) -> None:
    assert parse_gpu_product(product) == arch


def test_parse_gpu_product_tolerates_non_strings() -> None:
    assert parse_gpu_product(None) == "unknown"  # type: ignore[arg-type]
    assert parse_gpu_product(100) == "unknown"  # type: ignore[arg-type]


KNOWN_OR_UNKNOWN = {*GPU_ARCHITECTURES, "unknown"}


@given(st.text())
def test_parse_gpu_product_never_raises(product: str) -> None:
    assert parse_gpu_product(product) in KNOWN_OR_UNKNOWN


@given(
    st.sampled_from([c[0] for c in PRODUCT_CASES]),
    st.sampled_from(["", "-SHARED", "-MIG-1g.10gb", "-MIG-3g.40gb-SHARED"]),
    st.booleans(),
    st.booleans(),
)
def test_parse_gpu_product_variants_keep_the_arch(
    product: str, suffix: str, lower: bool, spaces: bool
) -> None:
    expected = parse_gpu_product(product)
    variant = product + suffix
    variant = variant.lower() if lower else variant
    variant = variant.replace("-", " ") if spaces else variant
    assert parse_gpu_product(variant) == expected
    assert parse_gpu_product(expected) == expected


def _regex_parse_gpu_product(product: str) -> str:
    """The former regular-expression normalisation, the reference for the string version."""
    import re

    text = re.sub(r"-{2,}", "-", re.sub(r"[\s_]+", "-", product.strip().upper())).strip("-")
    text = text.removeprefix("NVIDIA-").removesuffix("-SHARED")
    text = re.sub(r"-MIG(-.*)?$", "", text)
    if text.startswith(("RTX-PRO-6000", "RTXPRO-6000", "RTXPRO6000")):
        return "rtxpro6000"
    arch = text.split("-", 1)[0].lower()
    return arch if arch in GPU_ARCHITECTURES else "unknown"


@given(
    st.lists(
        st.sampled_from(
            [
                "-",
                "_",
                "\t",
                "\u2003",
                "\n",
                "NVIDIA",
                "H100",
                "gb300",
                "RTX",
                "PRO",
                "6000",
                "-MIG",
                "MIG",
                "-SHARED",
                "1g.10gb",
                "x",
                "l40s",
            ]
        ),
        max_size=8,
    ).map("".join)
    | st.text()
)
def test_parse_gpu_product_matches_the_regular_expressions_it_replaced(product: str) -> None:
    assert parse_gpu_product(product) == _regex_parse_gpu_product(product)


def test_gpu_architectures_are_sorted() -> None:
    assert list(GPU_ARCHITECTURES) == sorted(GPU_ARCHITECTURES)
    assert GPU_ARCHITECTURES == (
        "a100",
        "b200",
        "b300",
        "gb200",
        "gb300",
        "h100",
        "h200",
        "l40",
        "l40s",
        "rtxpro6000",
    )


def test_check_gpu_arch_name() -> None:
    assert check_gpu_arch_name("gb300") == "gb300"
    assert check_gpu_arch_name("NVIDIA-GB300") == "gb300"
    with pytest.raises(ValueError) as info:
        check_gpu_arch_name("v100")
    assert str(info.value) == (
        "unknown GPU architecture 'v100': must be one of a100, b200, b300, gb200, gb300, "
        "h100, h200, l40, l40s, rtxpro6000"
    )


# --------------------------------------------------------------------------- majority vote


def test_majority_wins_and_minority_is_reported() -> None:
    nodes = [
        make_node("n1", product="NVIDIA-H100-80GB-HBM3"),
        make_node("n3", product="NVIDIA-H100-80GB-HBM3"),
        make_node("n2", product="NVIDIA-A100-SXM4-40GB"),
        make_node("n4", product="NVIDIA-H100-80GB-HBM3-SHARED"),
    ]
    result = detect_gpu_architecture(nodes)
    assert result.architecture == "h100"
    assert result.error is None
    assert result.model_products == ("NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-80GB-HBM3-SHARED")
    assert result.warning == (
        "mixed GPU architectures, using the majority: h100 on 3 of 4 labelled nodes; "
        "other architectures: a100: 1 node (n2)"
    )


def test_strict_mode_refuses_disagreement() -> None:
    nodes = [make_node(f"h{i}", product="NVIDIA-H200") for i in range(3)]
    nodes += [make_node(f"b{i}", product="NVIDIA-B200") for i in range(4)]
    result = detect_gpu_architecture(nodes, strict=True)
    assert result.architecture == "b200"
    assert result.error is not None
    assert result.error == (
        "mixed GPU architectures are not allowed in strict mode: b200 on 4 of 7 labelled nodes; "
        "other architectures: h200: 3 nodes (h0, h1, h2)"
    )


def test_strict_mode_accepts_uniform_fleet_with_unlabelled_nodes() -> None:
    nodes = [
        make_node("a", product="NVIDIA-GB200"),
        make_node("b"),
        make_node("c", product="NVIDIA-GB200-NVL72"),
    ]
    result = detect_gpu_architecture(nodes, strict=True)
    assert result.error is None
    assert result.warning is None
    assert result.architecture == "gb200"


def test_tie_goes_to_first_node_by_name() -> None:
    nodes = [
        make_node("node-b", product="NVIDIA-H100-NVL"),
        make_node("node-a", product="NVIDIA-A100-SXM4-40GB"),
    ]
    assert detect_gpu_architecture(nodes).architecture == "a100"
    assert detect_gpu_architecture(nodes[::-1]).architecture == "a100"


def test_tie_ignores_first_node_outside_the_tie() -> None:
    nodes = [
        make_node("a", product="NVIDIA-L40S"),
        make_node("b", product="NVIDIA-H100-80GB-HBM3"),
        make_node("c", product="NVIDIA-A100-SXM4-40GB"),
        make_node("d", product="NVIDIA-H100-80GB-HBM3"),
        make_node("e", product="NVIDIA-A100-SXM4-40GB"),
    ]
    result = detect_gpu_architecture(nodes)
    assert result.architecture == "h100"
    assert result.warning is not None
    assert result.warning.endswith("other architectures: a100: 2 nodes (c, e); l40s: 1 node (a)")


def test_unlabelled_nodes_do_not_vote() -> None:
    nodes = [
        make_node("x1"),
        make_node("x2"),
        make_node("x3", labels={"nvidia.com/gpu.product": ""}),
    ]
    nodes.append(make_node("y", product="NVIDIA-B200"))
    result = detect_gpu_architecture(nodes)
    assert result.architecture == "b200"
    assert result.warning is None
    assert result.model_products == ("NVIDIA-B200",)


def test_no_labelled_nodes_is_unknown() -> None:
    result = detect_gpu_architecture([make_node("a"), make_node("b")], strict=True)
    assert result.architecture == "unknown"
    assert result.model_products == ()
    assert result.error is None


def test_models_outside_the_table_vote_under_their_own_name() -> None:
    nodes = [
        make_node("a", product="Tesla-T4"),
        make_node("b", product="Tesla-T4"),
        make_node("c", product="NVIDIA-H100"),
    ]
    result = detect_gpu_architecture(nodes)
    assert result.architecture == "t4"
    assert result.model_products == ("Tesla-T4",)
    assert result.warning is not None and "other architectures: h100: 1 node (c)" in result.warning


def test_two_models_outside_the_table_are_mixed_and_strict_refuses_them() -> None:
    nodes = [
        make_node("a", product="NVIDIA-H800"),
        make_node("b", product="NVIDIA-H800"),
        make_node("c", product="NVIDIA-H20"),
    ]
    result = detect_gpu_architecture(nodes, strict=True)
    assert result.architecture == "h800"
    assert result.error is not None and "h800 on 2 of 3 labelled nodes" in result.error
    assert "h20: 1 node (c)" in result.error


def test_gke_accelerator_label_names_the_model_when_gfd_is_absent() -> None:
    nodes = [
        make_node("a", labels={"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}),
        make_node("b", product="NVIDIA-H100-80GB-HBM3"),
    ]
    result = detect_gpu_architecture(nodes)
    assert result.architecture == "h100"
    assert result.warning is None
    assert result.model_products == ("NVIDIA-H100-80GB-HBM3", "nvidia-h100-mega-80gb")


def test_gfd_product_wins_over_the_gke_accelerator_label() -> None:
    node = make_node(
        "a", product="NVIDIA-H200", labels={"cloud.google.com/gke-accelerator": "nvidia-l4"}
    )
    assert detect_gpu_architecture([node]).architecture == "h200"


@pytest.mark.parametrize(
    ("product", "model"),
    [
        pytest.param("NVIDIA-H20", "h20", id="h20-keeps-its-name"),
        pytest.param("NVIDIA-H800", "h800", id="h800-keeps-its-name"),
        pytest.param("NVIDIA-A800-SXM4-80GB", "a800", id="a800-keeps-its-name"),
        pytest.param("NVIDIA-A16", "a16", id="a16-keeps-its-name"),
        pytest.param("NVIDIA-GH200-480GB", "gh200", id="gh200-keeps-its-name"),
        pytest.param("Tesla-T4", "t4", id="brand-word-tesla-is-not-a-model"),
        pytest.param("NVIDIA-GeForce-RTX-4090", "rtx-4090", id="rtx-series-keeps-the-number"),
        pytest.param("GRID-A100-10C", "grid-a100-10c", id="vgpu-profile-keeps-its-whole-name"),
        pytest.param("NVIDIA GB300", "gb300", id="nvml-name-with-spaces-is-the-same-gpu"),
        pytest.param("NVIDIA-L40S", "l40s", id="table-architecture-unchanged"),
        pytest.param("", "", id="empty-product-names-no-model"),
    ],
)
def test_gpu_model(product: str, model: str) -> None:
    assert gpu_model(product) == model


@pytest.mark.parametrize(
    ("accelerator", "model"),
    [
        pytest.param("nvidia-h100-80gb", "h100", id="a3-high"),
        pytest.param("nvidia-h100-mega-80gb", "h100", id="a3-mega"),
        pytest.param("nvidia-h200-141gb", "h200", id="a3-ultra"),
        pytest.param("nvidia-b200", "b200", id="a4"),
        pytest.param("nvidia-gb200", "gb200", id="a4x"),
        pytest.param("nvidia-a100-80gb", "a100", id="a2-ultra"),
        pytest.param("nvidia-tesla-a100", "a100", id="a2-high"),
        pytest.param("nvidia-l4", "l4", id="g2-keeps-l4"),
        pytest.param("nvidia-b300", "b300", id="value-outside-the-table-still-names-its-model"),
    ],
)
def test_gke_accelerator_model(accelerator: str, model: str) -> None:
    assert gke_accelerator_model(accelerator) == model


@pytest.mark.parametrize(
    ("name", "label"),
    [
        pytest.param("NVIDIA GB300", "NVIDIA-GB300", id="blanks-become-dashes"),
        pytest.param("GRID A100-10C", "GRID-A100-10C", id="vgpu-name-as-gfd-labels-it"),
        pytest.param("NVIDIA  H100 (80GB)", "NVIDIA-H100-80GB", id="disallowed-characters-dropped"),
    ],
)
def test_gpu_product_label_value_matches_gfd(name: str, label: str) -> None:
    assert gpu_product_label_value(name) == label


# --------------------------------------------------------------------------- defaults
# NVCRE gpu-defaults G1 @ f81ff7af with its platformOverrides, as shared/reference/
# nvcre-workloadrun.md section 2.5 quotes them: the table must give exactly these.


def gpu_defaults(arch: str, platform: str = "") -> GpuDefaults:
    return bundled().gpu_defaults(parse_gpu_product(arch), platform)


@pytest.mark.parametrize(
    ("arch", "platform", "expected"),
    [
        pytest.param("h100", "aws", GpuDefaults(8, 8, False), id="h100"),
        pytest.param("a100", "", GpuDefaults(8, 8, False), id="a100"),
        pytest.param("l40", "gcp", GpuDefaults(8, 4, False), id="l40-has-4-nics"),
        pytest.param("l40s", "azure", GpuDefaults(8, 8, False), id="l40s"),
        pytest.param("b200", "onprem", GpuDefaults(8, 8, False), id="b200"),
        pytest.param("b300", "onprem", GpuDefaults(8, 8, False), id="b300-is-x86-hgx"),
        pytest.param("h200", "gcp", GpuDefaults(8, 8, False), id="h200"),
        pytest.param("gb200", "aws", GpuDefaults(4, 8, True), id="gb200-mnnvl"),
        pytest.param("gb300", "azure", GpuDefaults(4, 8, True), id="gb300-mnnvl"),
        pytest.param("rtxpro6000", "gcp", GpuDefaults(8, 0, False), id="rtxpro6000-no-nics"),
        pytest.param("unknown", "aws", GpuDefaults(4, 0, False), id="unknown-fallback"),
        pytest.param("v100", "", GpuDefaults(4, 0, False), id="unrecognised-fallback"),
        pytest.param("l40s", "oci", GpuDefaults(4, 2, False), id="oci-l40s"),
        pytest.param("gb200", "oci", GpuDefaults(4, 0, True), id="oci-gb200-explicit-zero-nics"),
        pytest.param("gb300", "oci", GpuDefaults(4, 4, True), id="oci-gb300"),
        pytest.param("gb300", "nscale", GpuDefaults(4, 4, True), id="nscale-gb300-only-nics"),
        pytest.param("h100", "oci", GpuDefaults(8, 8, False), id="oci-h100-no-override"),
        pytest.param(
            "NVIDIA-GB200-NVL72", "oci", GpuDefaults(4, 0, True), id="product-name-accepted"
        ),
    ],
)
def test_gpu_defaults(arch: str, platform: str, expected: GpuDefaults) -> None:
    assert gpu_defaults(arch, platform) == expected


def test_empty_platform_skips_overrides() -> None:
    assert gpu_defaults("gb200") == GpuDefaults(4, 8, True)
    assert gpu_defaults("gb200", "") == GpuDefaults(4, 8, True)


@given(st.text())
def test_gpu_model_never_raises_and_agrees_with_the_table(product: str) -> None:
    model = gpu_model(product)
    arch = parse_gpu_product(product)
    if arch != "unknown":
        assert model == arch
    assert model == model.lower()
    assert not model.startswith("-") and not model.endswith("-")


@given(st.text())
def test_gpu_product_label_value_is_idempotent_and_has_only_label_characters(name: str) -> None:
    label = gpu_product_label_value(name)
    assert gpu_product_label_value(label) == label
    assert all(c.isascii() and (c.isalnum() or c in "-_.") for c in label)


@given(st.sampled_from(["NVIDIA-H20", "NVIDIA-H800", "GRID-A100-10C", "Tesla-T4", "NVIDIA-A16"]))
def test_gfd_label_and_nvml_name_of_one_gpu_are_one_model(product: str) -> None:
    nvml_name = product.replace("-", " ", 1)  # "NVIDIA H20": the ResourceSlice productName form
    assert gpu_model(gpu_product_label_value(nvml_name)) == gpu_model(product)
