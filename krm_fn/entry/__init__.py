"""The entry points: the KRM function run, the preview and the command line.

:mod:`~krm_fn.entry.run` (the function: ResourceList or stream in, the same out, and the
kustomize plugin forms), :mod:`~krm_fn.entry.preview` (``render``), :mod:`~krm_fn.entry.inputs`
(files and directories read for both), :mod:`~krm_fn.entry.cli` (the function run without
click) and :mod:`~krm_fn.entry.commands` (the click subcommands, the report's included).

Invariant: the top layer; nothing in the package imports it (enforced by import-linter).
"""
