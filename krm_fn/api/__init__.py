"""Typed API models: the ``WorkloadRun`` spec and the function's own config."""
