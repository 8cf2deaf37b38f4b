"""Verdicts per group: thresholds, failures, failed nodes, fail-closed defaults."""

from __future__ import annotations

import pytest

from krm_fn.report.model import GroupReport

from .conftest import judge, megatron_log, nccl_log, real_log, trainjob_yaml

P5 = nccl_log("aws-awsome-distributed-training_aws-batch-p5_all_reduce.txt").read_text()
# 2 hosts x 8 H200 in its '# Using devices' lines, so it covers the 2 x 8 test group
H200 = real_log("spectrum-x-openshift_h200-2node_all_reduce_float.txt").read_text()
OCI = nccl_log("oci-hpc-oke_bm-gpu-b4-8-2node-slinky_all_reduce_v2.17.9.txt").read_text()
IB = nccl_log("FAILURE_stas00-ml-engineering_azure-net-ib-completion-error-12.txt").read_text()
MOE = megatron_log("unattributed_megatron-core-moe-ep8_iterations_tflops-per-gpu.txt").read_text()
RANKED = megatron_log(
    "aws-awsome-distributed-training_slurm-gpt3_megatron-lm_iterations_rank-prefixed.txt"
).read_text()
BW = '{"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}'


def group_for(log: str | None, **job: str | None) -> GroupReport:
    logs = {} if log is None else {"run-group-0": log}
    return judge(trainjob_yaml(**job), logs).workload_runs[0].groups[0]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("thresholds", "status", "value"),
    [
        # spectrum-x float lines 56-57: busbw 485.57 and 485.66 at 8 and 16 GiB, so 485.57
        # is sustained over adjacent sizes; algbw 258.97 and 259.02; line 59: avg 178.222
        pytest.param(
            '{"busBandwidthGBps": "value >= 480"}', "Passed", 485.57, id="sustained-busbw-passes"
        ),
        pytest.param(
            '{"busBandwidthGBps": "value >= 900"}', "Failed", 485.57, id="sustained-busbw-too-low"
        ),
        pytest.param(
            '{"avgBusBandwidthGBps": "value > 175 && value < 180"}',
            "Passed",
            178.222,
            id="avg-in-range",
        ),
        pytest.param(
            '{"algBandwidthGBps": "value >= 258"}', "Passed", 258.97, id="sustained-algbw"
        ),
        pytest.param(
            '{"goodput": "value >= 0.5"}',
            "Failed",
            None,
            id="training-metric-missing-from-nccl-log",
        ),
    ],
)
def test_bandwidth_thresholds(thresholds: str, status: str, value: float | None) -> None:
    group = group_for(H200, thresholds=thresholds, bandwidth=BW)
    assert group.status == status
    [result] = group.thresholds
    assert result.value == (pytest.approx(value) if value is not None else None)
    assert result.passed is (status == "Passed")
    if status == "Failed":
        [failure] = [f for f in group.failures if f.kind == "threshold"]
        assert failure.reason == "ThresholdViolation"
        assert ("no value measured" in failure.message) is (value is None)


def test_goodput_threshold_on_measured_goodput() -> None:
    # MoE: goodput 1.0 (capped), but the run stops at iteration 100 of 40000
    group = group_for(
        MOE,
        thresholds='{"goodput": "value >= 0.95", "tflopsPerGPU": "value >= 11"}',
        goodput='{"logProfileRef": "megatron-training"}',
    )
    assert [t.passed for t in group.thresholds] == [True, True]
    assert group.status == "Failed"
    assert {f.kind for f in group.failures} == {"training-incomplete"}
    assert any("capped at 1.0" in n for n in group.notes)


@pytest.mark.parametrize(
    ("nvcre", "ours"),
    [
        pytest.param("goodputRatio", "goodput", id="goodputRatio-reads-measured-goodput"),
        pytest.param("avgTFLOPsPerGPU", "tflopsPerGPU", id="avgTFLOPsPerGPU-reads-tflops"),
        pytest.param("avgStepTimeSec", "stepTimeSeconds", id="avgStepTimeSec-reads-step-time"),
    ],
)
def test_nvcre_training_keys_read_the_same_metric_as_our_aliases(nvcre: str, ours: str) -> None:
    group = group_for(
        MOE,
        thresholds=f'{{"{nvcre}": "value > 0", "{ours}": "value > 0"}}',
        goodput='{"logProfileRef": "megatron-training"}',
    )
    by_key = {t.key: t for t in group.thresholds}
    assert by_key[nvcre].value is not None
    assert by_key[nvcre].value == by_key[ours].value
    assert by_key[nvcre].passed


def test_c2c_keys_are_understood_but_fail_closed() -> None:
    group = group_for(P5, thresholds='{"c2cVerified": "value == 1.0"}', bandwidth=BW)
    [result] = group.thresholds
    assert result.value is None and not result.passed
    assert "C2CMeasurement" in (result.note or "")


def test_goodput_estimate_never_satisfies_a_threshold() -> None:
    group = group_for(
        RANKED,
        thresholds='{"goodput": "value >= 0.1", "stepTimeSeconds": "value < 0.1"}',
        goodput='{"logProfileRef": "megatron-training"}',
    )
    goodput, step = group.thresholds
    assert goodput.value is None and not goodput.passed
    assert "estimate 1.000 is not a measurement" in (goodput.note or "")
    assert step.value == pytest.approx(0.0873) and step.passed  # (87.0 + 86.5 + 88.4) / 3 ms


def test_no_log_fails_with_workload_failed_and_thresholds_fail() -> None:
    group = group_for(None, thresholds='{"busBandwidthGBps": "value >= 1"}', bandwidth=BW)
    assert group.status == "Failed"
    assert group.failures[0].kind == "no-log"
    assert group.failures[0].reason == "WorkloadFailed"
    assert "no log found for TrainJob run-group-0" in group.failures[0].message
    assert group.thresholds[0].note == "no log"


def test_log_without_measurement_is_no_data_not_a_pass() -> None:
    group = group_for("hello\nworld\n", bandwidth=BW)
    assert group.status == "NoData"
    report = judge(trainjob_yaml(bandwidth=BW), {"run-group-0": "hello\n"})
    assert report.result == "FAILED"
    [both] = report.workload_runs[0].failed_nodes  # one reason, listed once for both nodes
    assert (both.nodes, both.reason) == (["node-a", "node-b"], "WorkloadFailed")
    assert "no measurement data" in both.message


def test_hardware_failure_names_the_node_and_regroups_it_first() -> None:
    # line 2: "node-2:5776:5902 [0] ... NCCL WARN NET/IB : Got completion from peer 10.2.0.5..."
    report = judge(
        trainjob_yaml(nodes="node-1,node-2,node-3,node-4", bandwidth=BW),
        {"run-group-0": IB},
    )
    group = report.workload_runs[0].groups[0]
    assert group.status == "Failed"
    by_node = {n: f for f in report.workload_runs[0].failed_nodes for n in f.nodes}
    assert by_node["node-2"].reason == "HardwareFailureDetected"
    assert "10.2.0.5:33092" in by_node["node-2"].message
    assert set(by_node) == {"node-1", "node-2", "node-3", "node-4"}
    assert group.suggested_groups == [["node-2", "node-1"], ["node-3", "node-4"]]


def test_passing_group_lends_known_good_nodes_to_the_suggestion() -> None:
    rendered = (
        trainjob_yaml(nodes="a1,a2", bandwidth=BW)
        + "---\n"
        + trainjob_yaml("run-group-1", group="group-1", nodes="b1,b2", bandwidth=BW)
    )
    report = judge(rendered, {"run-group-0": H200, "run-group-1": IB})
    good, bad = report.workload_runs[0].groups
    assert (good.status, bad.status) == ("Passed", "Failed")
    assert bad.suggested_groups == [["b1", "a1"], ["b2", "a1"]]
    assert report.result == report.workload_runs[0].result == "FAILED"
    assert report.workload_runs[0].passed_groups == 1


def test_log_problems_do_not_suggest_regrouping() -> None:
    cut = "\n".join(P5.splitlines()[:20])
    group = group_for(cut, nodes="a,b,c,d", bandwidth=BW)
    assert group.status == "Failed" and group.suggested_groups == []


def test_collective_mismatch_fails() -> None:
    # OCI line 8 and spectrum-x float line 8: "# Collective test starting: all_reduce_perf"
    group = group_for(OCI, bandwidth='{"testType": "all_gather"}')
    assert "collective-mismatch" in {f.kind for f in group.failures}
    assert group_for(H200, bandwidth='{"testType": "allreduce"}').status == "Passed"


def test_unpinned_failed_group_lists_unknown_nodes() -> None:
    report = judge(trainjob_yaml(nodes=None, bandwidth=BW), {"run-group-0": IB})
    [failed] = report.workload_runs[0].failed_nodes
    assert failed.nodes == [] and failed.reason == "HardwareFailureDetected"
    assert report.workload_runs[0].groups[0].suggested_groups == []


def test_measurement_found_without_annotation_is_still_judged() -> None:
    wrong = nccl_log(
        "FAILURE_unattributed_rtx3090-2node-inc_all_reduce_out-of-bounds-108.txt"
    ).read_text()
    group = group_for(wrong)
    assert group.bandwidth is not None
    assert {"nccl-out-of-bounds", "nccl-wrong-results"} <= {f.kind for f in group.failures}
    assert any("built-in nccl-bandwidth" in n for n in group.notes)


def test_notes_for_validation_off_and_socket_transport() -> None:
    azure = nccl_log(
        "azure-aks-rdma-infiniband_aks-sriov-ib-2node_all_reduce_nocheck.txt"
    ).read_text()
    group = group_for(azure, bandwidth=BW)
    # the log lists no '# Rank' lines, so it cannot show it covered the group: that alone fails
    assert {f.kind for f in group.failures} == {"log-coverage"}
    assert any("validation was off" in n for n in group.notes)
    socket = nccl_log(
        "WARN_gnosia93-training-on-eks_p4d-aws-ofi-nccl-init-failed_fallback-socket.txt"
    ).read_text()
    group = group_for(socket)
    assert group.status == "Failed"
    assert {f.kind for f in group.failures} == {"nccl-warn-net-plugin-init"}
