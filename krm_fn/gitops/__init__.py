"""GitOps helpers: options from the environment, the compact inventory, waves, Argo CD, Flux.

:mod:`~krm_fn.gitops.env_options` (``WORKLOADRUN_FN_*`` options, the plain-Secret refusal),
:mod:`~krm_fn.gitops.compact_inventory` (``workloadrun-fn inventory``),
:mod:`~krm_fn.gitops.release` (``workloadrun-fn release``), :mod:`~krm_fn.gitops.flux`
(per-wave Flux Kustomizations) and :mod:`~krm_fn.gitops.discover` (the Argo CD plugin's
discovery).

Invariant: used only by the entry points; imports the render and the layers below it.
"""
