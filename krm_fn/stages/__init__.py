"""The render's stages, one module each, in pipeline order (see :mod:`krm_fn.render`).

1. :mod:`~krm_fn.stages.parse` — refuse bad inputs, parse runs, validate every ``when``.
2. :mod:`~krm_fn.stages.checks` — names, rules, measurements, deadline.
3. :mod:`~krm_fn.stages.nodes` — select the eligible nodes and tolerations (offline
   preview: synthetic nodes), within :mod:`~krm_fn.stages.run_flags`' topology domain.
4. :mod:`~krm_fn.stages.platform` — detect platform and GPU, capacity filter; then
   :mod:`~krm_fn.stages.run_flags` sizes ``numNodes``.
5. :mod:`~krm_fn.stages.partitioning` — groups of nodes, one TrainJob each.
6. :mod:`~krm_fn.stages.env` — env, resources, config and pull secrets.
7. :mod:`~krm_fn.stages.overrides` — match every ``when`` once (and, later, apply).
8. :mod:`~krm_fn.stages.waves` — TrainJob names, iterations and waves.
9. :mod:`~krm_fn.stages.plan` — the run's plan (built by :mod:`krm_fn.builders.plan`).
10. :mod:`~krm_fn.stages.objects` — dependencies and TrainJobs; later the DRA objects.
11. :mod:`~krm_fn.stages.finalize` — env forwarding, Trainer limits, apply order, sizes.
12. :mod:`~krm_fn.stages.summary` — the run's output, summary and note.

Invariants:
    * A stage takes and returns typed values (frozen dataclasses), reports problems only
      through the :class:`~krm_fn.stages.diagnostics.RunDiagnostics` it is given, and
      never mutates a value another stage returned (the finalize stage edits the objects it
      is handed, which no earlier stage keeps using).
"""
