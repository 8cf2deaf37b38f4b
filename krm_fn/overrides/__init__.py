"""WorkloadRun ``spec.overrides``: ``when`` matching, strategic merge and application.

Modules, one job each:
    * :mod:`~krm_fn.overrides.smp`: Kubernetes strategic-merge patch for the generated kinds.
    * :mod:`~krm_fn.overrides.when`: matching a WhenSpec against the render context.
    * :mod:`~krm_fn.overrides.jobtemplate`: NVCRE's job template of a TrainJob, and back.
    * :mod:`~krm_fn.overrides.placement`: what must still hold after an override.
    * :mod:`~krm_fn.overrides.apply`: applying matching overrides to the generated objects.

Nothing here mutates its inputs. The package re-exports nothing, so importing one module
(``when`` while parsing) does not import the others.
"""
