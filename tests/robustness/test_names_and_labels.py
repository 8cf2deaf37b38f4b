"""Generated names and labels are always valid; an input that would break one is refused by field."""

from __future__ import annotations

import re
from typing import Any

import pytest

from krm_fn.api.naming import TRAINJOB_NAME_MAX
from krm_fn.entry.run import run_krm
from tests.golden.make_inputs import HERE as GOLDEN
from tests.k8s_schemas import validate_all, validate_metadata
from tests.robustness.helpers import (
    REGISTRY,
    assert_clean_refusal,
    by_kind,
    dump,
    generated,
    mpi_run,
    node,
    nodes,
    rl,
    run_fn,
)

RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
SUCCESS_CASES = sorted(
    p.name
    for p in GOLDEN.iterdir()
    if (p / "expected.yaml").exists() and (p / "input.yaml").exists()
)


def assert_names_valid(objs: list[dict[str, Any]]) -> None:
    for o in objs:
        name = o["metadata"]["name"]
        if o["kind"] == "TrainJob":
            assert RFC1035.match(name), name
            assert len(name) <= TRAINJOB_NAME_MAX, name
        else:
            assert DNS1123_SUBDOMAIN.match(name) and len(name) <= 253, name
        assert validate_metadata(o) == [], o["metadata"]
    names = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objs]
    assert len(names) == len(set(names)), "two generated objects share a name"


def _render(*runs: dict[str, Any], count: int = 4) -> list[dict[str, Any]]:
    out = run_krm(dump(rl([*runs, *nodes(count)])))
    assert out.exit_code == 0, out.stderr
    return generated(out.stdout)


@pytest.mark.parametrize("case", SUCCESS_CASES)
def test_every_name_and_label_of_a_golden_case_is_valid(case: str) -> None:
    text = (GOLDEN / case / "expected.yaml").read_text()
    objs = generated(text)
    assert objs
    assert_names_valid(objs)


@pytest.mark.parametrize(
    "length", [1, 20, 33, 34, 44, 45, 50, 62, 63], ids=lambda n: f"run-name-of-{n}-chars"
)
def test_run_names_up_to_63_chars_give_valid_distinct_trainjob_names(
    length: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NGC_API_KEY", "names-test")
    name = ("w" + "orkload-run-name-" * 5)[:length].rstrip("-")
    runs = [
        mpi_run(name, numNodes=2, orchestration={"repeatCount": 3}, config={"inline": {"a": "b"}}),
    ]
    out = run_krm(dump(rl([*runs, *nodes(5)], REGISTRY)))
    if out.exit_code:
        pytest.fail("\n".join(out.stderr))
    objs = generated(out.stdout)
    trainjobs = by_kind(objs, "TrainJob")
    assert len(trainjobs) == 9  # (2 groups + 1 overflow) x 3 iterations
    assert_names_valid(objs)
    assert validate_all(objs) == []


def test_shortened_names_stay_distinct_and_stable() -> None:
    base = "a-very-long-workloadrun-name-for-the-nightly-fleet"
    first = _render(mpi_run(base, numNodes=1, orchestration={"repeatCount": 12}), count=2)
    again = _render(mpi_run(base, numNodes=1, orchestration={"repeatCount": 12}), count=2)
    names = [o["metadata"]["name"] for o in by_kind(first, "TrainJob")]
    assert len(names) == len(set(names)) == 24
    assert names == [o["metadata"]["name"] for o in by_kind(again, "TrainJob")]
    assert all(len(n) <= TRAINJOB_NAME_MAX for n in names)


# --- refusals -----------------------------------------------------------------------------------

RFC1035_HINT = "cannot prefix TrainJob names, which must be RFC 1035 labels"
BAD_RUN_NAMES = {
    "run-name-with-a-dot-refused": "my.workload",
    "run-name-upper-case-refused": "MyWorkload",
    "run-name-leading-digit-refused": "1st-run",
    "run-name-trailing-dash-refused": "run-",
    "run-name-underscore-refused": "my_run",
}


@pytest.mark.parametrize("case", list(BAD_RUN_NAMES))
def test_run_name_that_cannot_name_trainjobs_is_refused(case: str) -> None:
    name = BAD_RUN_NAMES[case]
    data = dump(rl([mpi_run(name), *nodes(2)]))
    assert_clean_refusal(run_fn(data), data, f"WorkloadRun {name}: metadata.name: ", RFC1035_HINT)


LABEL_REFUSALS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "queue-label-value-with-space-refused": (
        {"gangScheduler": {"schedulerName": "kai-scheduler", "queue": "team a"}},
        ("spec.gangScheduler.queue: queue 'team a' is not a valid label value",),
    ),
    "queue-label-value-of-64-chars-refused": (
        {"gangScheduler": {"schedulerName": "kai-scheduler", "queue": "q" * 64}},
        ("spec.gangScheduler.queue: ", "at most 63 characters"),
    ),
    "queue-label-key-with-two-slashes-refused": (
        {"gangScheduler": {"schedulerName": "kai-scheduler", "queueLabelKey": "a/b/c"}},
        ("spec.gangScheduler.queueLabelKey: 'a/b/c' is not a valid label key",),
    ),
    "queue-label-key-reserved-refused": (
        {
            "gangScheduler": {
                "schedulerName": "kai-scheduler",
                "queueLabelKey": "nvcre.nvidia.com/q",
            }
        },
        ("spec.gangScheduler.queueLabelKey: queueLabelKey must not use",),
    ),
    "workload-label-key-with-space-refused": (
        {"workloadMetadata": {"labels": {"team name": "a"}}},
        ("spec.workloadMetadata.labels['team name']: invalid label key",),
    ),
    "workload-label-value-with-bang-refused": (
        {"workloadMetadata": {"labels": {"team": "a!"}}},
        ("spec.workloadMetadata.labels['team']: invalid label value 'a!'",),
    ),
    "workload-label-value-of-64-chars-refused": (
        {"workloadMetadata": {"labels": {"team": "t" * 64}}},
        ("spec.workloadMetadata.labels['team']: invalid label value",),
    ),
    "workload-label-key-prefix-not-dns-refused": (
        {"workloadMetadata": {"labels": {"Example.COM/team": "a"}}},
        ("spec.workloadMetadata.labels['Example.COM/team']: invalid label key",),
    ),
    "workload-label-reserved-prefix-refused": (
        {"workloadMetadata": {"labels": {"nvcre.nvidia.com/group": "g"}}},
        ("label key is reserved for the controller",),
    ),
    "more-than-32-workload-labels-refused": (
        {"workloadMetadata": {"labels": {f"k{i}": "v" for i in range(33)}}},
        ("spec.workloadMetadata.labels: 33 labels exceeds the maximum of 32",),
    ),
    "workload-label-conflicting-with-queue-refused": (
        {
            "gangScheduler": {"schedulerName": "kai-scheduler", "queue": "q1"},
            "workloadMetadata": {"labels": {"kai.scheduler/queue": "q2"}},
        },
        ("conflicting label value 'q2', expected 'q1'",),
    ),
}


@pytest.mark.parametrize("case", list(LABEL_REFUSALS))
def test_label_that_would_be_invalid_is_refused_naming_the_field(case: str) -> None:
    spec, fragments = LABEL_REFUSALS[case]
    out = run_krm(dump(rl([mpi_run(**spec), *nodes(2)])))
    stderr = "\n".join(out.stderr)
    assert out.exit_code == 1, stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in stderr
    assert "(workloadrun.yaml#0)" in stderr
    assert generated(out.stdout) == []


def test_label_refusal_through_the_console_script() -> None:
    data = dump(rl([mpi_run(workloadMetadata={"labels": {"team": "a!"}}), *nodes(2)]))
    assert_clean_refusal(
        run_fn(data), data, "BuildFailed: WorkloadRun x: spec.workloadMetadata.labels['team']"
    )


def test_valid_workload_labels_and_queue_reach_trainjobs() -> None:
    objs = _render(
        mpi_run(
            gangScheduler={"schedulerName": "kai-scheduler", "queue": "team-a.q_1"},
            workloadMetadata={"labels": {"example.com/team": "A-b_c.9", "empty": ""}},
        )
    )
    assert_names_valid(objs)
    for tj in by_kind(objs, "TrainJob"):
        labels = tj["metadata"]["labels"]
        assert labels["kai.scheduler/queue"] == "team-a.q_1"
        assert labels["example.com/team"] == "A-b_c.9"
        assert labels["empty"] == ""


@pytest.mark.parametrize("length", [64, 100, 253], ids=lambda n: f"run-name-of-{n}-chars-refused")
def test_run_name_longer_than_a_label_value_is_refused(length: int) -> None:
    name = ("r" + "x" * 300)[:length]
    data = dump(rl([mpi_run(name), *nodes(2)]))
    assert_clean_refusal(
        run_fn(data), data, f"WorkloadRun {name}: metadata.name: ", "nvcre.nvidia.com/workload-run"
    )


@pytest.mark.parametrize(
    "namespace",
    ["../../etc", "Team_A", "a.b", "x" * 64],
    ids=[
        "namespace-path-traversal-refused",
        "namespace-upper-case-underscore-refused",
        "namespace-with-dot-refused",
        "namespace-of-64-chars-refused",
    ],
)
def test_invalid_namespace_is_refused_naming_the_field(namespace: str) -> None:
    run_ = mpi_run()
    run_["metadata"]["namespace"] = namespace
    data = dump(rl([run_, *nodes(2)]))
    assert_clean_refusal(
        run_fn(data),
        data,
        "metadata.namespace: ",
        "must be a DNS-1123 label",
        "(workloadrun.yaml#0)",
    )


@pytest.mark.parametrize(
    "name",
    ["a,b", "Node A", ["n1"]],
    ids=[
        "node-name-with-comma-refused",
        "node-name-with-space-refused",
        "node-name-list-refused",
    ],
)
def test_node_name_that_is_not_a_dns_subdomain_is_refused(name: Any) -> None:
    bad = node("placeholder")
    bad["metadata"]["name"] = name
    bad["metadata"]["labels"]["kubernetes.io/hostname"] = str(name)
    data = dump(rl([mpi_run(numNodes=1), bad]))
    assert_clean_refusal(run_fn(data), data, "metadata.name")


POD_TIME_INVALID: dict[str, tuple[dict[str, Any], str]] = {
    "node-selector-key-invalid-refused": (
        {"target": {"nodeSelector": {"bad key!": "v"}}},
        "spec.target.nodeSelector",
    ),
    "match-expression-key-invalid-refused": (
        {"target": {"matchExpressions": [{"key": "bad key!", "operator": "Exists"}]}},
        "spec.target.matchExpressions[0].key",
    ),
    "taint-selector-key-invalid-refused": (
        {"target": {"taintSelectors": [{"key": "bad key!"}]}},
        "spec.target.taintSelectors[0].key",
    ),
    "env-name-invalid-refused": ({"env": [{"name": "BAD NAME", "value": "x"}]}, "spec.env[0].name"),
    "volume-name-invalid-refused": (
        {
            "volumes": [{"name": "Bad_Vol", "emptyDir": {}}],
            "volumeMounts": [{"name": "Bad_Vol", "mountPath": "/x"}],
        },
        "spec.volumes[0].name",
    ),
    "inline-config-key-invalid-refused": (
        {"config": {"inline": {"a/b.sh": "x"}}},
        "spec.config.inline",
    ),
}


@pytest.mark.parametrize("case", list(POD_TIME_INVALID))
def test_value_the_api_server_would_reject_at_pod_creation_is_refused_at_render(case: str) -> None:
    """The TrainingRuntime's pod template is not validated on apply: catch it here."""
    spec, path = POD_TIME_INVALID[case]
    labels = {"bad key!": "v"} if "key-invalid" in case and "config" not in case else {}
    data = dump(rl([mpi_run(numNodes=1, **spec), node("gpu-node-01", labels=labels)]))
    assert_clean_refusal(run_fn(data), data, path)
