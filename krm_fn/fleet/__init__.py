"""The fleet layer: which nodes a run may use and how they are cut into groups.

:mod:`~krm_fn.fleet.inventory` (eligibility), :mod:`~krm_fn.fleet.partition` (groups of
``numNodes``) and :mod:`~krm_fn.fleet.topology` (topology domains and waves).

Invariant: imports only the api and io layers (enforced by import-linter).
"""
