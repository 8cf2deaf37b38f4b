"""``python -m krm_fn`` runs the command line."""

from krm_fn.cli import main

main()
