"""End to end: the click command on a hand-written rendered sample and real logs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from krm_fn.report.command import report
from krm_fn.report.model import report_json_schema

from .conftest import DATA, megatron_log, nccl_log, real_log, trainjob_yaml

RENDERED = DATA / "rendered.yaml"
SCHEMA = report_json_schema()
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture()
def logs(tmp_path: Path) -> Path:
    """A log directory laid out as the matching rule expects, from real fixture logs."""
    root = tmp_path / "logs"
    root.mkdir()
    # group-0 passes: 2 hosts x 8 GPUs (lines 12-27), busbw 485.66 at 16 GiB (line 57),
    # avg 178.222 (line 59)
    shutil.copy(
        real_log("spectrum-x-openshift_h200-2node_all_reduce_float.txt"),
        root / "nccl-pairs-group-0.log",
    )
    # group-1 fails: 108 out-of-bounds values (line 39); pod-log naming inside a directory
    (root / "nccl-pairs-group-1").mkdir()
    shutil.copy(
        nccl_log("FAILURE_unattributed_rtx3090-2node-inc_all_reduce_out-of-bounds-108.txt"),
        root / "nccl-pairs-group-1" / "nccl-pairs-group-1-launcher-0-0-x7k2p.log",
    )
    # group-2-overflow: no log at all
    shutil.copy(
        megatron_log("microsoft-superbenchmark_megatron-deepspeed_iterations_tflops.txt"),
        root / "llm-pretrain-group-0.txt",
    )
    return root


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(report, list(args), input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_text_report_exit_code_and_plot(logs: Path, tmp_path: Path) -> None:
    plot = tmp_path / "busbw.svg"
    results = tmp_path / "results.json"
    code, out, _ = invoke(
        str(RENDERED), "--logs", str(logs), "--plot", str(plot), "--results-file", str(results)
    )
    assert code == 1
    assert "WorkloadRun Report" in out
    assert (
        "group-0 (2 nodes: gpu-node-01, gpu-node-02)\n  TrainJob:   nccl-pairs-group-0\n  Status:     Passed"
        in out
    )
    assert "  Status:     Failed" in out
    # the table rows, out-of-place, read from spectrum-x float lines 33 and 57
    assert "         1 KiB        0.02        0.04            0" in out
    assert "        16 GiB      259.02      485.66            0" in out
    assert "HardwareFailureDetected: nccl-tests found 108 out-of-bounds values" in out
    assert "WorkloadFailed: no log found for TrainJob nccl-pairs-group-2-overflow" in out
    assert out.startswith("WorkloadRun Report\n\nSummary\nGroup ")
    assert "\nResult: FAILED (2/4 groups passed)\n" in out
    assert out.rstrip().endswith("Result: FAILED")
    # the missing log is named once for the group's two nodes, not once per node
    assert out.count("no log found for TrainJob nccl-pairs-group-2-overflow") == 2  # block + list
    assert "gpu-node-07, gpu-node-08 (nccl-pairs/group-2-overflow): WorkloadFailed: no log" in out
    root = ET.parse(plot).getroot()
    assert root.tag == f"{SVG}svg"
    assert len(root.findall(f".//{SVG}polyline")) == 2
    jsonschema.validate(json.loads(results.read_text()), SCHEMA)


def test_only_passing_runs_exit_zero(logs: Path) -> None:
    code, out, _ = invoke(str(RENDERED), "--logs", str(logs), "--workload-run", "llm-pretrain")
    assert code == 0
    assert "Goodput:         0.999 (99.9%)" in out
    assert out.rstrip().endswith("Result: PASSED")


def test_json_output_validates(logs: Path) -> None:
    code, out, _ = invoke(str(RENDERED), "--logs", str(logs), "-o", "json")
    assert code == 1
    data = json.loads(out)
    jsonschema.validate(data, SCHEMA)
    assert [g["status"] for run in data["workloadRuns"] for g in run["groups"]] == [
        "Passed",
        "Failed",
        "Failed",
        "Passed",
    ]


def test_markdown_output(logs: Path) -> None:
    code, out, _ = invoke(str(RENDERED), "--logs", str(logs), "-o", "md")
    assert code == 1
    assert out.startswith("# WorkloadRun report")
    assert "| group-0 | gpu-node-01, gpu-node-02 | ✅ Passed |" in out


def test_logs_from_stdin_with_trainjob_headers(tmp_path: Path) -> None:
    rendered = tmp_path / "r.yaml"
    rendered.write_text(
        trainjob_yaml(
            nodes="lab",
            num_nodes=1,
            gpus_per_node=1,
            bandwidth='{"testType": "all_reduce"}',
            thresholds='{"busBandwidthGBps": "value >= 2"}',
        )
    )
    body = real_log("eunomia-nccl-ebpf_rtx5090-2rank-1gpu_all_reduce_perf_mpi.txt").read_text()
    code, out, _ = invoke(str(rendered), "--logs", "-", stdin=f"# trainjob: run-group-0\n{body}")
    assert code == 0, out
    # lines 27-28: busbw 2.29 at 64 MiB and 2.30 at 128 MiB, the top two adjacent sizes
    assert "busBandwidthGBps  value >= 2  PASS  2.29 GB/s" in out


def test_unmatched_log_is_warned_about(tmp_path: Path) -> None:
    rendered = tmp_path / "r.yaml"
    rendered.write_text(trainjob_yaml())
    stray = tmp_path / "someone-else.log"
    stray.write_text("x\n")
    (tmp_path / "another.log").write_text("y\n")  # two logs: neither is the TrainJob's
    code, out, err = invoke(
        str(rendered), "--logs", str(stray), "--logs", str(tmp_path / "another.log")
    )
    assert code == 1
    assert f"warning: log {stray} matched no TrainJob" in err
    assert "no log found for TrainJob run-group-0" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(["RENDERED"], "Missing option '--logs'", id="logs-required"),
        pytest.param(
            ["--logs", "LOGS", "--threshold", "busBandwidthGBps>=300"],
            "is not KEY=EXPRESSION",
            id="threshold-without-equals",
        ),
        pytest.param(
            ["--logs", "LOGS", "--threshold", "latency=value < 1"],
            "unknown threshold key 'latency'",
            id="threshold-unknown-key",
        ),
        pytest.param(
            ["--logs", "LOGS", "--threshold", "busBandwidthGBps=value >= 300 GB"],
            "busBandwidthGBps: ",
            id="threshold-bad-expression",
        ),
        pytest.param(
            ["--logs", "LOGS", "--log-profile", "BAD"],
            "the file holds no LogProfile",
            id="log-profile-without-profiles",
        ),
        pytest.param(
            ["RENDERED", "--logs", "/nonexistent/x.log"], "does not exist", id="missing-log-path"
        ),
        pytest.param(["-", "--logs", "-"], "stdin ('-') can be read only once", id="stdin-twice"),
        pytest.param(
            ["RENDERED", "--logs", "LOGS", "-o", "html"], "Invalid value for '-o'", id="bad-output"
        ),
        pytest.param(
            ["RENDERED", "--logs", "LOGS", "--workload-run", "nope"],
            "no WorkloadRun nope",
            id="unknown-run",
        ),
        pytest.param(
            ["BAD", "--logs", "LOGS"], "unknown threshold key 'latency'", id="bad-rendered-input"
        ),
    ],
)
def test_usage_errors_exit_2(args: list[str], fragment: str, logs: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(trainjob_yaml(thresholds='{"latency": "value < 1"}'))
    mapping = {"RENDERED": str(RENDERED), "LOGS": str(logs), "BAD": str(bad)}
    code, _, err = invoke(*[mapping.get(a, a) for a in args], stdin="")
    assert code == 2
    assert fragment in err


def test_import_is_light() -> None:
    # What importing the command adds, beyond the package itself: click and stdlib only.
    code = (
        "import sys, krm_fn; before = set(sys.modules); "
        "import krm_fn.report.command as c; "
        "new = sorted(set(sys.modules) - before); "
        "print([m for m in new if m.split('.')[0] in ('yaml', 'pydantic', 'jsonschema') "
        "or (m.startswith('krm_fn.') and m not in ('krm_fn.report', 'krm_fn.report.command'))]); "
        "assert c.report.name == 'report'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "[]"


# --- issue 28: a report from the logs alone -------------------------------------------------

ALLTOALL = real_log(
    "search-index-52914185530_2node-16rank_alltoall_v2.18.3_nccl-2.30.3_erratic-collapse.txt"
)
NEMO2 = real_log("search-index-5513486081_nemo-25.09-llama3-8b_iterations-97-99-of-99_finished.txt")


def test_logs_alone_infer_what_the_log_states_and_judge_the_thresholds(tmp_path: Path) -> None:
    plot = tmp_path / "p.svg"
    code, out, _ = invoke(
        "--logs", str(ALLTOALL), "--threshold", "busBandwidthGBps=value >= 30",
        "--threshold", "avgBusBandwidthGBps=value > 5", "-o", "json", "--plot", str(plot),
    )  # fmt: skip
    assert code == 1
    data = json.loads(out)
    jsonschema.validate(data, SCHEMA)
    (group,) = data["workloadRuns"][0]["groups"]
    bandwidth = group["bandwidth"]
    # lines 17-35: alltoall_perf, 16 ranks on 2 hosts, 8 devices each
    assert (bandwidth["collective"], bandwidth["rankCount"]) == ("alltoall", 16)
    assert group["nodes"] == ["R6KD-CX8aaS-GPU-14", "R6KD-CX8aaS-GPU-15"]
    # 8 GiB reaches 34.17 alone; 4 GiB and 8 GiB both reach 24.19 (lines 61-62)
    assert bandwidth["peakBusBandwidthGBps"] == 34.17
    assert [(t["key"], t["value"], t["passed"]) for t in group["thresholds"]] == [
        ("busBandwidthGBps", 24.19, False),
        ("avgBusBandwidthGBps", 7.39538, True),
    ]
    # the dashed threshold line sits at 30 GB/s
    texts = [t.text for t in ET.parse(plot).getroot().iter(f"{SVG}text")]
    assert "busBandwidthGBps: value >= 30" in texts


def test_logs_alone_with_a_directory_judge_each_file_on_its_own(tmp_path: Path) -> None:
    shutil.copy(NEMO2, tmp_path / "nemo.log")
    shutil.copy(ALLTOALL, tmp_path / "a2a.txt")
    code, out, _ = invoke("--logs", str(tmp_path))
    assert code == 0
    summary = out.split("\n\n")[1].splitlines()
    assert summary[2].split()[:5] == ["a2a", "2", "Passed", "7.40", "24.19"]
    # NeMo 2: 12.21 s a step (lines 2-4); 24 s of timestamps are too short for a goodput
    assert summary[3].split()[:5] == ["nemo", "?", "Passed", "-", "-"]
    assert summary[3].split()[5:] == ["12.21s", "-", "-", "-"]


def test_log_profile_file_reads_the_logs_alone(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: LogProfile\nmetadata: {name: mine}\n"
        "spec:\n  timestamp: {layout: '2006-01-02T15:04:05Z07:00'}\n  warmupSteps: 0\n"
        "  patterns:\n    trainingStep:\n"
        "      regex: 'iteration (?P<iteration>\\d+)/\\d+ \\|.*train_step_timing in s: (?P<elapsedTime>[\\d.]+)'\n"
        "      units: {elapsedTime: s}\n"
    )
    code, out, _ = invoke("--logs", str(NEMO2), "--log-profile", str(profile), "-o", "json")
    training = json.loads(out)["workloadRuns"][0]["groups"][0]["training"]
    assert (code, training["logProfile"], training["warmupSteps"]) == (0, "mine", 0)


def test_one_trainjob_and_one_log_belong_together_whatever_the_name(tmp_path: Path) -> None:
    rendered = tmp_path / "r.yaml"
    rendered.write_text(trainjob_yaml(nodes="lab", num_nodes=1, gpus_per_node=1))
    log = tmp_path / "output-of-friday.txt"
    shutil.copy(real_log("eunomia-nccl-ebpf_rtx5090-2rank-1gpu_all_reduce_perf_mpi.txt"), log)
    code, out, err = invoke(str(rendered), "--logs", str(log))
    assert (code, err) == (0, ""), out
    assert f"Log:        {log}" in out


def test_json_schema_is_printed_without_other_input() -> None:
    code, out, _ = invoke("--json-schema")
    assert code == 0
    assert json.loads(out) == SCHEMA
    assert SCHEMA["properties"]["apiVersion"]["const"] == (
        "report.workloadrun-fn.nvcre.nvidia.com/v1alpha1"
    )
