"""Resolver semantics on small synthetic catalogs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from krm_fn.platforms.catalog import Catalog, load_catalog, parse_catalog
from krm_fn.platforms.overlay import EnvVar, PlatformContext, make_context, resolve

SYNTHETIC = """
version: 1
entries:
  - name: base
    source: test
    env: [{name: X, value: "1"}, {name: Y, value: "1"}]
    forwardEnv: [{name: F, value: "a-{gpusPerNode}"}]
    mpiArgs: ["-a", "{gpusPerNode}"]
    resources:
      limits: {r1: 1, r2: "{gpusPerNode}", keep: "2Gi"}
    securityContext: {capabilities: {add: [A]}, privileged: false}
    tolerations: [{key: t1, operator: Exists}]
    podAnnotations: {k1: a, k2: "n={nicsPerNode}"}
    topologyKey: ka
    preCommand: [pa, 'echo ${HOME} {nicsPerNode}']
    volumes: [{name: va, emptyDir: {}}]
    volumeMounts: [{name: va, mountPath: /a}]
    nicResourceName: na
  - name: aws-only
    source: test
    when: {platform: aws}
    env: [{name: Y, value: "2"}, {name: Z, value: "2"}]
    mpiArgs: ["-b"]
    resources:
      limits: {r1: 2}
      requests: {r3: "{nicsPerNode|int}"}
    securityContext: {capabilities: {add: [B]}, runAsUser: 0}
    podAnnotations: {k2: b}
    topologyKey: kb
  - name: gcp-only
    source: test
    when: {platform: gcp}
    env: [{name: X, value: "3"}]
  - name: aws-torch
    source: test
    when: {platform: aws, frameworks: [torch]}
    env: [{name: T, value: "1"}]
  - name: aws-h100
    source: test
    when: {platform: [aws, azure], gpuArchitecture: [h100]}
    tolerations: []
    preCommand: [pe]
    volumes: [{name: ve, hostPath: {path: /e}}]
    volumeMounts: [{name: ve, mountPath: /e}]
"""


@pytest.fixture(scope="module")
def synthetic() -> Catalog:
    return parse_catalog(SYNTHETIC, "synthetic")


def ctx(
    platform: str = "aws",
    arch: str = "h100",
    framework: str = "mpi",
    gpus: int = 8,
    nics: int = 4,
    instance_types: frozenset[str] = frozenset(),
    accelerators: frozenset[str] = frozenset(),
) -> PlatformContext:
    return PlatformContext(
        platform=platform,
        gpu_architecture=arch,
        framework=framework,
        instance_types=instance_types,
        gke_accelerators=accelerators,
        gpus_per_node=gpus,
        nics_per_node=nics,
    )


def test_entries_apply_in_order_and_later_wins(synthetic: Catalog) -> None:
    overlay = resolve(synthetic, ctx())
    assert overlay.applied == ("base", "aws-only", "aws-h100")
    assert overlay.env == (EnvVar("X", "1"), EnvVar("Y", "2"), EnvVar("Z", "2"))
    assert overlay.forward_env == (EnvVar("F", "a-8"),)
    assert overlay.topology_key == "kb"
    assert overlay.nic_resource_name == "na"


def test_mpi_args_of_a_later_entry_come_first_each_followed_by_its_forwarded_env(
    synthetic: Catalog,
) -> None:
    # NVCRE prepends each matching entry's mpiArgs (applyWRPreTemplateOverrides); an entry's
    # forwardEnv rides as -x pairs after its own mpiArgs (toMpiArgs).
    assert resolve(synthetic, ctx()).mpi_args == ("-b", "-a", "8", "-x", "F=a-8")


def test_maps_merge_key_by_key(synthetic: Catalog) -> None:
    overlay = resolve(synthetic, ctx())
    assert overlay.resources == {
        "limits": {"r1": 2, "r2": "8", "keep": "2Gi"},
        "requests": {"r3": 4},
    }
    assert overlay.pod_annotations == {"k1": "a", "k2": "b"}


def test_security_context_deep_merges_and_its_lists_replace(synthetic: Catalog) -> None:
    assert resolve(synthetic, ctx()).security_context == {
        "capabilities": {"add": ["B"]},
        "privileged": False,
        "runAsUser": 0,
    }


def test_lists_replace_including_with_an_empty_list(synthetic: Catalog) -> None:
    overlay = resolve(synthetic, ctx())
    assert overlay.tolerations == ()
    assert overlay.pre_command == ("pa", "echo ${HOME} 4", "pe")  # concatenated, as NVCRE
    assert overlay.volumes == ({"name": "ve", "hostPath": {"path": "/e"}},)
    assert overlay.volume_mounts == ({"name": "ve", "mountPath": "/e"},)


def test_non_matching_entries_leave_earlier_values(synthetic: Catalog) -> None:
    overlay = resolve(synthetic, ctx(platform="gcp", arch="b200"))
    assert overlay.applied == ("base", "gcp-only")
    assert overlay.env == (EnvVar("X", "3"), EnvVar("Y", "1"))
    assert overlay.tolerations == ({"key": "t1", "operator": "Exists"},)
    assert overlay.pre_command == ("pa", "echo ${HOME} 4")
    assert overlay.volumes == ({"name": "va", "emptyDir": {}},)
    assert overlay.pod_annotations == {"k1": "a", "k2": "n=4"}


def test_torch_turns_forward_env_into_trainer_env_and_drops_mpi_args(synthetic: Catalog) -> None:
    overlay = resolve(synthetic, ctx(framework="torch"))
    assert overlay.applied == ("base", "aws-only", "aws-torch", "aws-h100")
    assert overlay.env == (EnvVar("X", "1"), EnvVar("Y", "2"), EnvVar("Z", "2"), EnvVar("T", "1"))
    assert overlay.trainer_env == (EnvVar("F", "a-8"),)
    assert overlay.forward_env == ()
    assert overlay.mpi_args == ()


def test_framework_filter_excludes_other_frameworks(synthetic: Catalog) -> None:
    assert "aws-torch" not in resolve(synthetic, ctx(framework="exec")).applied


def test_unknown_platform_matches_only_platform_agnostic_entries(synthetic: Catalog) -> None:
    assert resolve(synthetic, ctx(platform="unknown")).applied == ("base",)


def test_unknown_arch_matches_only_arch_agnostic_entries(synthetic: Catalog) -> None:
    assert resolve(synthetic, ctx(arch="unknown")).applied == ("base", "aws-only")


def test_arch_in_context_is_normalised(synthetic: Catalog) -> None:
    assert "aws-h100" in resolve(synthetic, ctx(arch="NVIDIA-H100-80GB-HBM3")).applied


def test_templated_zero_resource_is_dropped(synthetic: Catalog) -> None:
    overlay = resolve(synthetic, ctx(nics=0))
    assert "requests" not in overlay.resources
    assert overlay.pod_annotations["k2"] == "b"


def test_templated_zero_removes_an_earlier_value() -> None:
    catalog = parse_catalog(
        textwrap.dedent(
            """
            version: 1
            entries:
              - {name: a, source: s, resources: {limits: {nic: 5, gpu: "{gpusPerNode}"}}}
              - {name: b, source: s, resources: {limits: {nic: "{nicsPerNode|int}"}}}
            """
        )
    )
    assert resolve(catalog, ctx(gpus=0, nics=0)).resources == {}
    assert resolve(catalog, ctx(gpus=2, nics=3)).resources == {"limits": {"nic": 3, "gpu": "2"}}


def test_overlay_is_a_fresh_copy(synthetic: Catalog) -> None:
    first = resolve(synthetic, ctx())
    first.security_context["capabilities"]["add"].append("MUTATED")
    first.volumes[0]["hostPath"]["path"] = "/mutated"
    first.resources["limits"]["r1"] = 99  # type: ignore[index]
    second = resolve(synthetic, ctx())
    assert second.security_context["capabilities"] == {"add": ["B"]}
    assert second.volumes[0]["hostPath"] == {"path": "/e"}
    assert second.resources["limits"]["r1"] == 2
    assert resolve(synthetic, ctx()) == second


SHAPES = """
version: 1
entries:
  - name: p5
    source: s
    when: {platform: aws, instanceTypes: [p5.48xlarge], defaultShape: true}
    topologyKey: p5
  - name: p5en
    source: s
    when: {platform: aws, instanceTypes: [p5en.48xlarge, p5en.metal]}
    topologyKey: p5en
  - name: mega
    source: s
    when: {platform: gcp, gkeAccelerator: nvidia-h100-mega-80gb}
    topologyKey: mega
"""


@pytest.mark.parametrize(
    ("platform", "instance_types", "accelerators", "applied"),
    [
        pytest.param("aws", {"p5.48xlarge"}, set(), ("p5",), id="listed-shape-matches"),
        pytest.param(
            "aws", {"p5en.48xlarge", "p5en.metal"}, set(), ("p5en",), id="all-nodes-listed-matches"
        ),
        pytest.param(
            "aws", {"p5.48xlarge", "p5en.48xlarge"}, set(), (), id="mixed-shapes-match-nothing"
        ),
        pytest.param("aws", set(), set(), ("p5",), id="no-shape-label-matches-default-shape-only"),
        pytest.param("aws", {"g6e.48xlarge"}, set(), (), id="unlisted-shape-matches-nothing"),
        pytest.param("gcp", set(), set(), (), id="no-accelerator-without-default-shape"),
        pytest.param(
            "gcp", set(), {"nvidia-h100-mega-80gb"}, ("mega",), id="single-string-accelerator"
        ),
    ],
)
def test_shape_matching(
    platform: str, instance_types: set[str], accelerators: set[str], applied: tuple[str, ...]
) -> None:
    catalog = parse_catalog(SHAPES)
    context = ctx(
        platform=platform,
        instance_types=frozenset(instance_types),
        accelerators=frozenset(accelerators),
    )
    assert resolve(catalog, context).applied == applied


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"framework": "slurm"}, "unknown framework 'slurm': must be one of exec, mpi, torch"),
        ({"nics": -1}, "must be >= 0"),
    ],
)
def test_invalid_context_is_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ctx(**kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- templates
# (the catalog file's validation: tests/platforms/test_catalog_validation.py)


def catalog_with(entry: str) -> str:
    return "version: 1\nentries:\n  - {name: ok, source: s, topologyKey: k}\n" + textwrap.indent(
        textwrap.dedent(entry).strip(), "  "
    )


def test_shell_variables_are_not_placeholders() -> None:
    catalog = parse_catalog(
        catalog_with(
            "- {name: sh, source: s, preCommand: ['export P=\"/x${P:+:${P}}\"', 'echo {a,b}']}"
        )
    )
    overlay = resolve(catalog, ctx())
    assert overlay.pre_command == ('export P="/x${P:+:${P}}"', "echo {a,b}")


def test_null_resource_deletes_and_claims_render_counts() -> None:
    catalog = parse_catalog(
        textwrap.dedent(
            """
            version: 1
            entries:
              - name: a
                source: s
                computeDomain: true
                resources: {limits: {nvidia.com/gpu: null}}
                claimTemplates:
                  - {claim: gpu, suffix: gpu, request: gpu, deviceClassName: gpu.nvidia.com,
                     count: "{gpusPerNode|int}"}
                  - {claim: nic, suffix: nic, request: nic, deviceClassName: x.example.com,
                     count: "{nicsPerNode|int}"}
            """
        )
    )
    overlay = resolve(catalog, ctx(gpus=4, nics=0))
    assert overlay.resources == {"limits": {"nvidia.com/gpu": None}}
    assert overlay.compute_domain
    assert [(c.claim, c.count) for c in overlay.claim_templates] == [("gpu", 4)]


def test_a_shape_entry_sizes_the_nodes_of_its_shape_and_the_spec_beats_it(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(
        "version: 1\nentries:\n  - {name: p5-efa, source: s, when: {platform: aws, "
        "instanceTypes: p5.48xlarge}, gpusPerNode: 8, nicsPerNode: 32}\n"
    )
    catalog = load_catalog([site])
    node = {
        "metadata": {"name": "n", "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}}
    }
    ctx = make_context(
        catalog, platform="aws", gpu_architecture="h100", framework="mpi", nodes=[node]
    )
    assert (ctx.gpus_per_node, ctx.nics_per_node, ctx.gpus_from) == (8, 32, "p5-efa")
    other = make_context(catalog, platform="aws", gpu_architecture="h100", framework="mpi")
    assert (other.nics_per_node, other.gpus_from) == (8, "gpu-defaults")
    spec = make_context(
        catalog,
        platform="aws",
        gpu_architecture="h100",
        framework="mpi",
        nodes=[node],
        gpus_per_node=4,
        nics_per_node=0,
    )
    assert (spec.gpus_per_node, spec.nics_per_node, spec.gpus_from) == (4, 0, "spec")
