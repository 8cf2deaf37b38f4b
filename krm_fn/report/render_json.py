"""Render the report as JSON (``-o json`` and ``--results-file``).

The shape is defined by ``krm_fn/report/schema/report.schema.json``.

Invariants:
    * Output is deterministic: keys in a fixed order, lists in report order.
    * Missing values are ``null``, never ``0``: a reader cannot mistake "not measured" for a
      measurement.
    * Numbers are the parsed values, unrounded.
"""

from __future__ import annotations

import json
from typing import Any

from krm_fn.report.evaluate import metric_value
from krm_fn.report.model import GroupReport, Report, RunReport
from krm_fn.report.parse_megatron import MegatronResult
from krm_fn.report.parse_nccl import Measure, NcclResult, NcclTable

__all__ = ["REPORT_API_VERSION", "render_json", "report_to_dict"]

REPORT_API_VERSION = "report.workloadrun-fn.nvcre.nvidia.com/v1alpha1"


def _measure(measure: Measure) -> dict[str, Any]:
    return {
        "timeUs": measure.time_us,
        "algBwGBps": measure.algbw,
        "busBwGBps": measure.busbw,
        "wrong": measure.wrong,
        "error": measure.error,
    }


def _table(table: NcclTable) -> dict[str, Any]:
    return {
        "source": table.source,
        "startLine": table.start_line,
        "hasHeader": table.has_header,
        "format": table.format,
        "complete": table.complete,
        "validation": table.validation,
        "outOfBounds": table.out_of_bounds,
        "avgBusBandwidthGBps": table.avg_bus_bandwidth,
        "avgSource": table.avg_source,
        "peakBusBandwidthGBps": table.peak_busbw,
        "profileRegexRows": sum(r.matched_by == "profile" for r in table.rows),
        "fallbackRows": sum(r.matched_by == "fallback" for r in table.rows),
        "elisions": table.elisions,
        "rows": [
            {
                "sizeBytes": row.size,
                "count": row.count,
                "type": row.dtype,
                "redop": row.redop,
                "root": row.root,
                "outOfPlace": _measure(row.out_of_place),
                "inPlace": _measure(row.in_place),
                "line": row.line,
                "matchedBy": row.matched_by,
            }
            for row in table.rows
        ],
    }


def _bandwidth(group: GroupReport, result: NcclResult) -> dict[str, Any]:
    spec = group.spec
    return {
        "logProfile": group.nccl_profile,
        "testType": spec.bandwidth.test_type if spec.bandwidth else None,
        "collective": result.collective,
        "ncclTestsVersion": result.tests_version,
        "ncclVersion": result.nccl_version,
        "networkTransports": list(result.transports),
        "hosts": result.hosts,
        "gpus": result.gpus,
        "parameters": dict(result.parameters),
        "peakBusBandwidthGBps": metric_value("busBandwidthGBps", group)[0],
        "peakAlgBandwidthGBps": metric_value("algBandwidthGBps", group)[0],
        "avgBusBandwidthGBps": metric_value("avgBusBandwidthGBps", group)[0],
        "tables": [_table(t) for t in result.tables],
    }


def _training(group: GroupReport, result: MegatronResult) -> dict[str, Any]:
    if result.goodput is not None:
        source = "timestamps"
    elif result.goodput_estimate is not None:
        source = "estimate"
    else:
        source = "none"
    stamps = (result.first_timestamp, result.last_timestamp)
    return {
        "logProfile": group.megatron_profile,
        "warmupSteps": result.warmup_steps,
        "stepLines": len(result.steps),
        "firstIteration": result.steps[0].iteration if result.steps else None,
        "lastIteration": result.last_iteration,
        "trainIterations": result.train_iters,
        "finished": result.finished,
        "measuredIterations": sum(a.productive for a in result.accounting),
        "warmupIterations": sum(a.warmup for a in result.accounting),
        "skippedIterations": result.skipped_iterations,
        "nanIterations": result.nan_iterations,
        "repeatedLines": result.repeated_lines,
        "avgStepTimeSeconds": result.avg_step_time_s,
        "avgTflopsPerGPU": result.avg_tflops,
        "tokensPerSecond": result.avg_tokens_per_second,
        "lastLoss": result.last_loss,
        "goodput": result.goodput,
        "goodputEstimate": result.goodput_estimate,
        "goodputSource": source,
        "wallTimeSeconds": result.wall_time_s,
        "productiveTimeSeconds": result.productive_time_s if result.goodput is not None else None,
        "firstTimestamp": stamps[0].isoformat() if stamps[0] else None,
        "lastTimestamp": stamps[1].isoformat() if stamps[1] else None,
        "checkpointSaves": result.checkpoint_saves,
        "checkpointRestores": result.checkpoint_restores,
        "hosts": list(dict.fromkeys(s.host for s in result.steps if s.host)),
    }


def _group(group: GroupReport) -> dict[str, Any]:
    spec = group.spec
    return {
        "name": spec.group,
        "trainJob": spec.trainjob,
        "namespace": spec.namespace,
        "overflow": spec.overflow,
        "nodes": list(spec.nodes) if spec.nodes is not None else None,
        "numNodes": spec.num_nodes,
        "framework": spec.framework,
        "status": group.status,
        "logs": list(group.log_sources),
        "bandwidth": _bandwidth(group, group.nccl) if group.nccl is not None else None,
        "training": _training(group, group.megatron) if group.megatron is not None else None,
        "thresholds": [
            {
                "key": t.key,
                "expression": t.expression,
                "value": t.value,
                "unit": t.unit,
                "passed": t.passed,
                "note": t.note,
            }
            for t in group.thresholds
        ],
        "failures": [
            {
                "reason": f.reason,
                "kind": f.kind,
                "message": f.message,
                "host": f.host,
                "peer": f.peer,
                "source": f.source,
                "line": f.line,
                "count": f.count,
                "hosts": list(f.hosts or ((f.host,) if f.host else ())),
            }
            for f in group.failures
        ],
        "notes": list(group.notes),
        "suggestedGroups": [list(g) for g in group.suggestion],
    }


def _run(run: RunReport) -> dict[str, Any]:
    return {
        "name": run.name,
        "namespace": run.namespace,
        "platform": run.platform,
        "gpu": run.gpu,
        "nodes": list(run.nodes),
        "nodeCount": run.node_count,
        "result": "PASSED" if run.passed else "FAILED",
        "passedGroups": run.passed_groups,
        "groups": [_group(g) for g in run.groups],
        "failedNodes": [
            {
                "node": n.node,
                "group": n.group,
                "trainJob": n.trainjob,
                "reason": n.reason,
                "message": n.message,
            }
            for n in run.failed_nodes
        ],
    }


def report_to_dict(report: Report) -> dict[str, Any]:
    """The report as plain JSON-ready data.

    Args:
        report: the evaluated report.

    Returns:
        A mapping that validates against ``report.schema.json``.

    """
    groups = [g for run in report.runs for g in run.groups]
    return {
        "apiVersion": REPORT_API_VERSION,
        "kind": "WorkloadRunReport",
        "result": "PASSED" if report.passed else "FAILED",
        "summary": {
            "groups": len(groups),
            "passedGroups": sum(g.status == "Passed" for g in groups),
            "failedNodes": sum(len(run.failed_nodes) for run in report.runs),
        },
        "workloadRuns": [_run(run) for run in report.runs],
        "unmatchedLogs": list(report.unmatched_logs),
    }


def render_json(report: Report) -> str:
    """The report as indented JSON text, ending with a newline."""
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False) + "\n"
