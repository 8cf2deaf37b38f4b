"""Builders of the generated objects: one module per kind or framework.

Every builder is a pure function from a :class:`~krm_fn.builders.plan.RunPlan` (and, for
TrainJobs, a group) to a plain ``dict``; key order is the output order, so builders decide
the layout users read.
"""
