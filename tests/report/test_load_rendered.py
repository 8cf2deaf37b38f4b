"""Reading the rendered objects: stream forms, annotations, and input errors."""

from __future__ import annotations

import pytest

from krm_fn.report.load_rendered import RenderedInputError, load_rendered

from .conftest import DATA, trainjob_yaml


def test_sample_stream() -> None:
    rendered = load_rendered((DATA / "rendered.yaml").read_text())
    assert [g.trainjob for g in rendered.groups] == [
        "nccl-pairs-group-0",
        "nccl-pairs-group-1",
        "nccl-pairs-group-2-overflow",
        "llm-pretrain-group-0",
    ]
    first, _, overflow, training = rendered.groups
    assert (first.run, first.group, first.nodes) == (
        "nccl-pairs",
        "group-0",
        ("gpu-node-01", "gpu-node-02"),
    )
    assert (first.platform, first.gpu, first.framework) == ("aws", "h100", "mpi")
    assert first.bandwidth is not None and first.bandwidth.test_type == "all_reduce"
    assert sorted(first.thresholds) == ["avgBusBandwidthGBps", "busBandwidthGBps"]
    assert overflow.overflow and not first.overflow
    assert training.nodes is None  # Unpinned: no group-nodes annotation
    assert training.num_nodes == 2
    assert training.goodput is not None
    assert training.goodput.profile.name == "deepspeed-short"
    assert training.goodput.profile.origin == "input"
    assert training.goodput.sample_interval == "60s"


@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(
            lambda doc: (
                "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
                + "".join(
                    f"  {line}\n" if i else f"- {line}\n" for i, line in enumerate(doc.splitlines())
                )
            ),
            id="resource-list",
        ),
        pytest.param(
            lambda doc: (
                "apiVersion: v1\nkind: List\nitems:\n"
                + "".join(
                    f"  {line}\n" if i else f"- {line}\n" for i, line in enumerate(doc.splitlines())
                )
            ),
            id="v1-list",
        ),
        pytest.param(lambda doc: f"---\n{doc}---\n", id="stream-with-empty-documents"),
    ],
)
def test_wrapped_forms(wrap: object) -> None:
    assert callable(wrap)
    rendered = load_rendered(wrap(trainjob_yaml()))
    assert [g.trainjob for g in rendered.groups] == ["run-group-0"]


def test_missing_profile_ref_defaults_to_the_builtin() -> None:
    rendered = load_rendered(trainjob_yaml(bandwidth='{"testType": "all_gather"}', goodput="{}"))
    group = rendered.groups[0]
    assert group.bandwidth is not None and group.bandwidth.profile.name == "nccl-bandwidth"
    assert group.bandwidth.defaulted
    assert group.goodput is not None and group.goodput.profile.name == "megatron-training"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("a: [", "not valid YAML", id="bad-yaml"),
        pytest.param("- just\n- a list\n", "not a Kubernetes object", id="not-an-object"),
        pytest.param(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
            "no TrainJob",
            id="no-trainjob",
        ),
        pytest.param(
            trainjob_yaml() + "---\n" + trainjob_yaml(), "appears twice", id="duplicate-trainjob"
        ),
        pytest.param(
            trainjob_yaml(thresholds="{not json"), "is not JSON", id="thresholds-not-json"
        ),
        pytest.param(
            trainjob_yaml(thresholds='["value > 1"]'),
            "must be a JSON object",
            id="thresholds-not-object",
        ),
        pytest.param(
            trainjob_yaml(thresholds='{"latencyUs": "value < 5"}'),
            "unknown threshold key 'latencyUs'",
            id="unknown-threshold-key",
        ),
        pytest.param(
            trainjob_yaml(thresholds='{"goodput": "value >> 1"}'),
            "goodput: position 8: unexpected '>': expected a value",
            id="threshold-syntax-error",
        ),
        pytest.param(
            trainjob_yaml(bandwidth='{"logProfileRef": "nccl-fast"}'),
            "unknown logProfileRef 'nccl-fast'",
            id="unknown-profile-ref",
        ),
        pytest.param(
            trainjob_yaml(bandwidth='{"logProfileRef": "megatron-training"}'),
            "has no bandwidthResult pattern",
            id="profile-of-the-wrong-kind",
        ),
        pytest.param(
            trainjob_yaml(bandwidth='{"logProfileref": "nccl-bandwidth"}'),
            "unknown field(s) logProfileref",
            id="misspelt-field",
        ),
        pytest.param(
            trainjob_yaml(bandwidth='{"testType": "All-Reduce"}'),
            "testType 'All-Reduce' must be a collective name such as all_reduce",
            id="bad-test-type",
        ),
        pytest.param(
            trainjob_yaml(goodput='{"sampleInterval": "soon"}'),
            "sampleInterval 'soon' must be a duration such as 60s",
            id="bad-sample-interval",
        ),
        pytest.param(
            "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: LogProfile\nmetadata: {name: p}\nspec: {}\n---\n"
            + trainjob_yaml(),
            "LogProfile 'p'",
            id="invalid-user-logprofile",
        ),
    ],
)
def test_unusable_input_is_an_error_naming_the_object(text: str, fragment: str) -> None:
    with pytest.raises(RenderedInputError) as caught:
        load_rendered(text)
    assert fragment in str(caught.value)
