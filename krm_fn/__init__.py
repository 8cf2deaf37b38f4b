"""workloadrun-fn: render NVCRE WorkloadRuns into Kubeflow Trainer v2.3 resources.

The package is split by stage, each module doing one job:

* :mod:`krm_fn.io.yamlio` and :mod:`krm_fn.io.resourcelist`: reading and writing YAML and
  KRM ``ResourceList`` documents.
* :mod:`krm_fn.api`: the typed models of ``WorkloadRun`` and of the function's own config.
* :mod:`krm_fn.fleet.inventory` and :mod:`krm_fn.fleet.partition`: which nodes are eligible and how
  they are cut into job groups.
* :mod:`krm_fn.builders.nccl_env`: the NCCL environment and its forwarding to MPI ranks.
* :mod:`krm_fn.builders`: the generated objects, one module per kind or framework.
* :mod:`krm_fn.stages`: the render's stages, one module each, taking and returning typed
  values (select nodes, resolve platform, partition, env, overrides, plan, objects, waves,
  finalize).
* :mod:`krm_fn.render` and :mod:`krm_fn.io.output`: the pipeline that ties the stages together
  and the bookkeeping on the way out (local-config, paths, idempotence).
"""

__version__ = "0.1.0"

from krm_fn.keys import MANAGER as MANAGER  # re-exported: the value of the managed-by label
