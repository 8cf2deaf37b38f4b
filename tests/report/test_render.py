"""Outputs: JSON (validated against the schema generated from the model), text, Markdown, SVG."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from krm_fn.report.model import Report, report_json_schema
from krm_fn.report.plot_svg import Series, plot_report, render_svg, threshold_lines
from krm_fn.report.render_md import render_md
from krm_fn.report.render_text import render_text

from .conftest import DATA, judge, megatron_log, nccl_log, real_log, trainjob_yaml

SCHEMA = report_json_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
SVG = "{http://www.w3.org/2000/svg}"


def sample_report() -> Report:
    logs = {
        # 2 hosts x 8 GPUs under '# Using devices': covers group-0 (2 nodes x 8)
        "nccl-pairs-group-0": real_log(
            "spectrum-x-openshift_h200-2node_all_reduce_float.txt"
        ).read_text(),
        "nccl-pairs-group-1": nccl_log(
            "FAILURE_unattributed_rtx3090-2node-inc_all_reduce_out-of-bounds-108.txt"
        ).read_text(),
        "llm-pretrain-group-0": megatron_log(
            "microsoft-superbenchmark_megatron-deepspeed_iterations_tflops.txt"
        ).read_text(),
    }
    return judge((DATA / "rendered.yaml").read_text(), logs)


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param("sample", id="mixed-pass-fail-nodata-and-training"),
        pytest.param("no-log", id="only-missing-logs"),
        pytest.param("old-format", id="old-format-without-root-column"),
        pytest.param("estimate", id="goodput-estimate-only"),
    ],
)
def test_json_validates_against_the_schema(case: str) -> None:
    if case == "sample":
        report = sample_report()
    elif case == "no-log":
        report = judge(trainjob_yaml(thresholds='{"goodput": "value > 0.5"}'), {})
    elif case == "old-format":
        text = nccl_log(
            "microsoft-superbenchmark_a100-1node_alltoall_oldformat_no-redop.txt"
        ).read_text()
        report = judge(trainjob_yaml(bandwidth="{}"), {"run-group-0": text})
    else:
        text = megatron_log(
            "aws-awsome-distributed-training_slurm-gpt3_megatron-lm_iterations_rank-prefixed.txt"
        ).read_text()
        report = judge(trainjob_yaml(goodput="{}"), {"run-group-0": text})
    VALIDATOR.validate(json.loads(report.model_dump_json()))


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda g: g.pop("status"), id="a-missing-key"),
        pytest.param(lambda g: g.update(extra=1), id="an-unknown-key"),
        pytest.param(lambda g: g.update(status="Unknown"), id="a-status-that-does-not-exist"),
        pytest.param(lambda g: g["failures"].append({"reason": "Oops"}), id="a-bad-failure"),
    ],
)
def test_schema_rejects_a_damaged_report(damage: object) -> None:
    data = sample_report().model_dump(mode="json")
    damage(data["workloadRuns"][0]["groups"][0])  # type: ignore[operator]
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(data)


def test_json_content_of_the_sample() -> None:
    data = sample_report().model_dump(mode="json")
    assert data["result"] == "FAILED"
    assert data["summary"] == {"groups": 4, "passedGroups": 2, "failedNodes": 6}
    pairs, training = data["workloadRuns"]
    group0, group1, overflow = pairs["groups"]
    assert group0["bandwidth"]["peakBusBandwidthGBps"] == pytest.approx(485.66)
    assert group0["bandwidth"]["sustainedBusBandwidthGBps"] == pytest.approx(485.57)
    assert group0["bandwidth"]["tables"][0]["rows"][-1]["sizeBytes"] == 17179869184
    assert group1["status"] == "Failed"
    assert group1["suggestedGroups"] == [
        ["gpu-node-03", "gpu-node-04"],
        ["gpu-node-05", "gpu-node-06"],
    ]
    assert overflow["overflow"] is True and overflow["failures"][0]["kind"] == "no-log"
    train = training["groups"][0]["training"]
    assert train["goodput"] == pytest.approx(0.999, abs=0.001)
    assert train["finished"] is True
    assert train["avgTflopsPerGPU"] == pytest.approx(149.136)
    assert training["result"] == "PASSED"


def test_plain_text_is_ascii_and_has_the_report_sections() -> None:
    text = render_text(sample_report())
    own = text.replace("\ufffd", "")
    assert own.isascii()
    assert text.startswith("WorkloadRun Report\n")
    for expected in [
        "Platform:  aws",
        "workloadrun/nccl-pairs",
        "Groups:    1/3 passed",
        "    16 GiB      259.02      485.66            0",  # spectrum-x float line 57
        "Avg Bus Bandwidth:        178.22 GB/s",
        "Sustained Bus Bandwidth:  485.57 GB/s",  # line 56: 8 GiB
        "Peak Bus Bandwidth:       485.66 GB/s at 16 GiB (raw maximum)",
        "busBandwidthGBps     value >= 400  PASS  485.57 GB/s",
        "Next grouping to isolate the bad node: [gpu-node-03, gpu-node-04] [gpu-node-05, gpu-node-06]",
        "gpu-node-07, gpu-node-08 (nccl-pairs/group-2-overflow): WorkloadFailed: no log found",
        "Avg TFLOPs/GPU:  149.1",
        "Result: FAILED",
    ]:
        assert expected in text, expected


def test_boxed_text_draws_frames() -> None:
    text = render_text(sample_report(), boxed=True)
    assert text.splitlines()[1].startswith("║") and "WorkloadRun Report" in text.splitlines()[1]
    widths = {len(line) for line in text.splitlines() if line.startswith(("│", "┌", "└", "├"))}
    assert len(widths) == 1  # every frame line has the same width


def test_markdown_summary() -> None:
    text = render_md(sample_report())
    assert text.startswith("# WorkloadRun report\n")
    assert "**Result: FAILED**" in text
    assert "| group-0 | gpu-node-01, gpu-node-02 | ✅ Passed | 178.22 | 485.57 |" in text
    assert "| group-1 | gpu-node-03, gpu-node-04, gpu-node-05, gpu-node-06 | ❌ Failed |" in text
    assert "- **HardwareFailureDetected**: nccl-tests found 108 out-of-bounds values" in text


def test_markdown_escapes_pipes_in_cells() -> None:
    report = judge(trainjob_yaml(thresholds='{"busBandwidthGBps": "value < 1 || value > 2"}'), {})
    text = render_md(report)
    assert "`value < 1 \\|\\| value > 2`" in text


def test_svg_plot_is_well_formed_with_one_series_per_group() -> None:
    svg = plot_report(sample_report())
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    lines = root.findall(f".//{SVG}polyline")
    assert len(lines) == 2  # group-0 and group-1 have tables
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "Message size (bytes, log2 scale)" in texts
    assert "Bus bandwidth, out-of-place (GB/s)" in texts
    assert "group-0 (Passed)" in texts and "group-1 (Failed)" in texts
    assert "16 GiB" in " ".join(t.text or "" for t in root.iter(f"{SVG}title"))


def test_svg_escapes_text_and_handles_no_data() -> None:
    svg = render_svg([Series('a<b & "c"', ((8, 1.0), (16, 2.0)))], "t <&>")
    root = ET.fromstring(svg)
    assert any(t.text == 'a<b & "c"' for t in root.iter(f"{SVG}text"))
    empty = ET.fromstring(render_svg([Series("zero-bytes-only", ((0, 0.0),))], "none"))
    texts = [t.text for t in empty.iter(f"{SVG}text")]
    assert "No bandwidth data in the logs" in texts
    assert texts[-1] == "zero-bytes-only"  # still in the legend


def test_svg_x_axis_is_log2() -> None:
    svg = render_svg([Series("s", ((8, 1.0), (64, 2.0), (512, 3.0)))], "t")
    root = ET.fromstring(svg)
    circles = [float(c.get("cx", "nan")) for c in root.iter(f"{SVG}circle")]
    # 8 -> 64 -> 512 are equal steps of 3 doublings: equally spaced
    assert circles[1] - circles[0] == pytest.approx(circles[2] - circles[1])


@pytest.mark.parametrize(
    ("expression", "lines"),
    [
        pytest.param("value >= 300", [300.0], id="one-bound"),
        pytest.param("value >= 400 && value < 2000", [400.0, 2000.0], id="two-bounds"),
        pytest.param("value > 5 || value < 1", [1.0, 5.0], id="outside-a-band"),
        pytest.param("value != 0.0", [0.0], id="only-zero-fails"),
    ],
)
def test_threshold_lines_sit_where_the_verdict_flips(expression: str, lines: list[float]) -> None:
    assert threshold_lines(expression, 4000.0) == pytest.approx(lines, abs=1e-3)


def test_svg_draws_the_busbw_threshold_above_the_data() -> None:
    svg = render_svg([Series("s", ((8, 1.0), (16, 2.0)))], "t", ["value >= 300"])
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "busBandwidthGBps: value >= 300" in texts
    assert "300" in texts  # the y axis reaches the threshold


def test_checked_in_schema_is_the_one_generated_from_the_model() -> None:
    # Regenerate with: workloadrun-fn report --json-schema > krm_fn/report/schema/report.schema.json
    checked_in = Path(__file__).resolve().parents[2] / "krm_fn/report/schema/report.schema.json"
    assert json.loads(checked_in.read_text()) == SCHEMA
