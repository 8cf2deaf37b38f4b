"""``workloadrun-fn report``: bandwidth and training logs judged per group (docs/report.md).

The groups come from the objects the render wrote (:mod:`~krm_fn.report.load_rendered`) or
from the logs alone; :mod:`~krm_fn.report.collect_logs` finds their logs. Each log format is
one module of :mod:`krm_fn.report.formats`, registered there; :mod:`~.detect_failures`
finds the failure lines of any log, :mod:`~.evaluate` assembles the verdicts into
:mod:`~.model`, which :mod:`~.render_text`, :mod:`~.render_md` and :mod:`~.plot_svg` draw
and ``-o json`` dumps. :mod:`~.command` is the click command.

Invariants:
    * Fail closed: a group passes only when its log was found, read to the end, showed no
      failure, produced its measurement and met every threshold.
    * Formats never judge outside their ``measure``; :mod:`~.evaluate` assembles.
    * Every number can be traced to a line of a log (rows and failures keep source and line).
    * Importing :mod:`krm_fn.report.command` costs only click and the standard library.
"""
