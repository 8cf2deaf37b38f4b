"""``python -m krm_fn`` runs the command line."""

from krm_fn.entry.cli import run

run()
