"""Resolver semantics and catalog validation, on small synthetic catalogs."""

from __future__ import annotations

import textwrap

import pytest

from krm_fn.platforms.catalog import (
    Catalog,
    CatalogError,
    EnvVar,
    PlatformContext,
    parse_catalog,
    resolve,
)

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


# --------------------------------------------------------------------------- validation


def catalog_with(entry: str) -> str:
    return "version: 1\nentries:\n  - {name: ok, source: s, topologyKey: k}\n" + textwrap.indent(
        textwrap.dedent(entry).strip(), "  "
    )


INVALID = [
    pytest.param(
        "- {name: bad, source: s, when: {platform: awz}, topologyKey: k}",
        "entry 'bad' (#1): field 'when.platform': unknown platform 'awz': must be one of aws,",
        id="unknown-platform",
    ),
    pytest.param(
        "- {name: bad, source: s, when: {gpuArchitecture: [h100, v100]}, topologyKey: k}",
        "entry 'bad' (#1): field 'when.gpuArchitecture': unknown GPU architecture 'v100'",
        id="unknown-arch",
    ),
    pytest.param(
        "- {name: bad, source: s, when: {frameworks: [slurm]}, topologyKey: k}",
        "entry 'bad' (#1): field 'when.frameworks[0]'",
        id="unknown-framework",
    ),
    pytest.param(
        "- {name: bad, source: '  ', topologyKey: k}",
        "entry 'bad' (#1): field 'source': source must cite where the values come from",
        id="empty-source",
    ),
    pytest.param(
        "- {name: bad, topologyKey: k}",
        "entry 'bad' (#1): field 'source': Field required",
        id="missing-source",
    ),
    pytest.param(
        "- {name: bad, source: s, topologykey: k}",
        "entry 'bad' (#1): field 'topologykey': Extra inputs are not permitted",
        id="misspelt-field",
    ),
    pytest.param(
        "- {name: bad, source: s, env: [{name: X, value: 1}]}",
        "entry 'bad' (#1): field 'env[0].value': Input should be a valid string (got 1; quote",
        id="unquoted-env-value",
    ),
    pytest.param(
        "- {name: bad, source: s, forwardEnv: [{name: X-Y, value: a}]}",
        "entry 'bad' (#1): field 'forwardEnv[0].name': invalid environment variable name 'X-Y'",
        id="bad-env-name",
    ),
    pytest.param(
        "- {name: bad, source: s, env: [{name: X, value: a}, {name: X, value: b}]}",
        "entry 'bad' (#1): field 'env': X is set twice",
        id="duplicate-env",
    ),
    pytest.param(
        "- {name: bad, source: s, mpiArgs: ['-x', 'N={gpuPerNode}']}",
        "entry 'bad' (#1): field 'mpiArgs': unknown template placeholder '{gpuPerNode}'",
        id="misspelt-placeholder",
    ),
    pytest.param(
        "- {name: bad, source: s, env: [{name: X, value: '{nicsPerNode|int}'}]}",
        "entry 'bad' (#1): field 'env[0].value': '{nicsPerNode|int}': the '|int' filter is only",
        id="int-filter-outside-resources",
    ),
    pytest.param(
        "- {name: bad, source: s, resources: {limits: {rdma/ib: 'x{nicsPerNode|int}'}}}",
        "entry 'bad' (#1): field 'resources.limits': rdma/ib: 'x{nicsPerNode|int}'",
        id="int-filter-not-whole-value",
    ),
    pytest.param(
        "- {name: bad, source: s, resources: {limits: {rdma/ib: true}}}",
        "entry 'bad' (#1): field 'resources.limits.rdma/ib",
        id="boolean-resource",
    ),
    pytest.param(
        "- {name: bad, source: s, resources: {limit: {rdma/ib: 1}}}",
        "entry 'bad' (#1): field 'resources.limit': Extra inputs are not permitted",
        id="misspelt-resources-section",
    ),
    pytest.param(
        "- {name: bad, source: s, volumeMounts: [{name: v, mountPath: /v}]}",
        "entry 'bad' (#1): field 'volumes' and field 'volumeMounts' must be set together",
        id="mount-without-volume",
    ),
    pytest.param(
        "- {name: bad, source: s, volumes: [{name: a}], volumeMounts: [{name: b, mountPath: /b}]}",
        "entry 'bad' (#1): field 'volumeMounts': mount 'b' names no volume of this entry",
        id="mount-names-unknown-volume",
    ),
    pytest.param(
        "- {name: bad, source: s, volumes: [{name: a}], volumeMounts: [{name: a}]}",
        "entry 'bad' (#1): field 'volumeMounts': item 0 of volumeMounts needs a non-empty string 'mountPath'",
        id="mount-without-path",
    ),
    pytest.param(
        "- {name: bad, source: s, securityContext: {privilegd: true}}",
        "entry 'bad' (#1): field 'securityContext': unknown container securityContext field(s): privilegd",
        id="misspelt-security-context",
    ),
    pytest.param(
        "- {name: bad, source: s, tolerations: [{key: a, operator: Equals}]}",
        "entry 'bad' (#1): field 'tolerations': item 0: unknown operator 'Equals'",
        id="bad-toleration-operator",
    ),
    pytest.param(
        "- {name: bad, source: s, nicsPerNode: -1}",
        "entry 'bad' (#1): field 'nicsPerNode': Input should be greater than or equal to 0",
        id="negative-nics",
    ),
    pytest.param(
        "- {name: bad, source: s, gpusPerNode: '8'}",
        "entry 'bad' (#1): field 'gpusPerNode': Input should be a valid integer (got '8')",
        id="string-gpus",
    ),
    pytest.param(
        "- {name: bad, source: s, when: {defaultShape: true}, topologyKey: k}",
        "entry 'bad' (#1): field 'when': defaultShape needs instanceTypes or gkeAccelerator",
        id="default-shape-without-shape",
    ),
    pytest.param(
        "- {name: bad, source: s, when: {platform: aws}}",
        "entry 'bad' (#1): entry sets nothing",
        id="entry-sets-nothing",
    ),
    pytest.param(
        "- {name: Bad_Name, source: s, topologyKey: k}",
        "entry 'Bad_Name' (#1): field 'name': invalid entry name 'Bad_Name'",
        id="bad-entry-name",
    ),
    pytest.param(
        "- {name: ok, source: s, topologyKey: k}",
        "entry 'ok' (#1): field 'name': duplicate entry name (first used by entry #0)",
        id="duplicate-entry-name",
    ),
    pytest.param(
        "- {source: s, topologyKey: k}",
        "entry #1: field 'name': Field required",
        id="unnamed-entry-is-numbered",
    ),
]


@pytest.mark.parametrize(("entry", "message"), INVALID)
def test_invalid_catalog_names_entry_and_field(entry: str, message: str) -> None:
    with pytest.raises(CatalogError) as info:
        parse_catalog(catalog_with(entry), "bad.yaml")
    assert str(info.value).startswith("invalid platform catalog bad.yaml:\n  ")
    assert any(problem.startswith(message) for problem in info.value.problems), info.value.problems


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("entries: [", "not valid YAML", id="malformed-yaml"),
        pytest.param("- a\n- b\n", "the document must be a mapping", id="not-a-mapping"),
        pytest.param(
            "version: 2\nentries: []\n", "field 'version': Input should be 1", id="wrong-version"
        ),
        pytest.param("version: 1\n", "field 'entries': Field required", id="missing-entries"),
    ],
)
def test_invalid_catalog_document(text: str, message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        parse_catalog(text)


def test_all_problems_are_reported_at_once() -> None:
    text = catalog_with(
        """
        - {name: a, source: s, when: {platform: x}, topologyKey: k}
        - {name: b, source: s, env: [{name: '1X', value: v}]}
        """
    )
    with pytest.raises(CatalogError) as info:
        parse_catalog(text)
    assert [p.split(":", 1)[0] for p in info.value.problems] == ["entry 'a' (#1)", "entry 'b' (#2)"]


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


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x,"
            " deviceClassName: 'Bad_Class', count: 1}]}",
            "field 'claimTemplates[0].deviceClassName': 'Bad_Class' is not a DNS subdomain",
        ),
        (
            "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x,"
            " deviceClassName: c.example.com, count: 0}]}",
            "field 'claimTemplates[0].count': Input should be greater than or equal to 1",
        ),
        (
            "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x,"
            " deviceClassName: c.example.com, count: '{gpusPerNode}'}]}",
            "field 'claimTemplates[0].count': use an integer or '{gpusPerNode|int}'",
        ),
        ("{name: a, source: s, computeDomain: false}", "set it to true or leave it out"),
        (
            "{name: a, source: s, env: [{name: X, value: v, whenGpusPerNode: [0]}]}",
            "field 'env[0].whenGpusPerNode[0]': Input should be greater than or equal to 1",
        ),
    ],
    ids=["device-class-not-dns", "zero-count", "count-not-int-template", "cd-false", "gpus-0"],
)
def test_dra_and_env_condition_fields_are_checked(text: str, problem: str) -> None:
    with pytest.raises(CatalogError) as info:
        parse_catalog(f"version: 1\nentries:\n  - {text}\n")
    assert any(problem in p for p in info.value.problems), info.value.problems
