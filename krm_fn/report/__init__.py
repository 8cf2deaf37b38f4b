"""``workloadrun-fn report``: bandwidth and goodput from real logs, judged by thresholds.

The package reads the objects the render wrote (TrainJobs, LogProfiles) and the logs the
TrainJobs left behind, and says per node group whether the run passed. One module per job:

* :mod:`krm_fn.thresholds`: the ``value >= 900`` expression language and the registry
  of threshold keys (shared with the render side, which validates keys with it).
* :mod:`krm_fn.report.logprofiles`: the built-in LogProfiles and the user ones from the input.
* :mod:`krm_fn.report.timestamps`, :mod:`krm_fn.report.prefixes`: Go time layouts and the
  launcher prefixes (``0: ``, ``[1,0]<stdout>:``, ``vm-07-14:``) that wrap log lines.
* :mod:`krm_fn.report.loglines`: the numbered-line model every parser reads.
* :mod:`krm_fn.report.parse_nccl`, :mod:`krm_fn.report.parse_megatron`,
  :mod:`krm_fn.report.detect_failures`: what a log says, without judging it.
* :mod:`krm_fn.report.load_rendered`, :mod:`krm_fn.report.collect_logs`: the inputs.
* :mod:`krm_fn.report.evaluate`, :mod:`krm_fn.report.regroup`: the verdict per group, held
  in :mod:`krm_fn.report.model`.
* :mod:`krm_fn.report.render_text`, :mod:`krm_fn.report.render_md`,
  :mod:`krm_fn.report.render_json`, :mod:`krm_fn.report.plot_svg`: the outputs, with
  :mod:`krm_fn.report.format_values` for numbers; ``schema/report.schema.json`` is the JSON
  shape.
* :mod:`krm_fn.report.command`: the click command, ``report``.

Invariants:
    * Fail closed: a group passes only when its log was found, parsed to the end, showed no
      failure, produced the configured measurement and met every threshold. A missing log, a
      truncated table, a missing metric or an unparsable line is a failure, never a pass.
    * No ``eval``: thresholds are parsed by a small recursive-descent parser.
    * Parsers never judge; :mod:`krm_fn.report.evaluate` is the only place that decides.
    * Every number in a report can be traced to a line of a log (rows and failures keep
      their source file and line number).
    * Importing :mod:`krm_fn.report.command` costs only click and the standard library.
"""
