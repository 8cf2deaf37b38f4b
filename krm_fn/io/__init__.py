"""The io layer: reading and writing what the orchestrators hand us, at fleet scale.

ResourceLists and plain streams in YAML or JSON (:mod:`~krm_fn.io.resourcelist`, the one
reader of every input form), the fast reader (:mod:`~krm_fn.io.fastio`) and writer
(:mod:`~krm_fn.io.fastdump`), YAML with its limits (:mod:`~krm_fn.io.yamlio`,
:mod:`~krm_fn.io.limits`), the Node records the readers extract (:mod:`~krm_fn.io.nodes`),
the results (:mod:`~krm_fn.io.results`) and the output bookkeeping
(:mod:`~krm_fn.io.output`).

Invariant: the bottom layer of the render; it imports only :mod:`krm_fn.keys` from the
package (enforced by import-linter, see ``pyproject.toml``).
"""
