"""bench/results.md: a benchmark run rewrites its tables and keeps the measured decisions.

The standards ask for a measured reason, in bench/results.md, for every hand-written
replacement of a library; a rerun of bench/run.py must not drop them (one once did).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def _bench_run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", REPO / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_rerun_replaces_the_tables_and_keeps_what_is_below_the_marker(tmp_path: Path) -> None:
    run = _bench_run()
    out = tmp_path / "results.md"
    out.write_text(f"# old tables\n\n{run.KEPT}\n\n## Measured decisions\n\nwhy\n")
    text = run.with_kept_part("# new tables\n", out)
    assert text == f"# new tables\n\n{run.KEPT}\n\n## Measured decisions\n\nwhy\n"


def test_a_first_run_writes_the_marker_for_what_is_to_be_kept(tmp_path: Path) -> None:
    run = _bench_run()
    text = run.with_kept_part("# tables\n", tmp_path / "results.md")
    assert text == f"# tables\n\n{run.KEPT}\n"


def test_the_results_record_why_each_hand_written_part_exists() -> None:
    run = _bench_run()
    text = (REPO / "bench" / "results.md").read_text()
    assert text.count(run.KEPT) == 1
    kept = text[text.index(run.KEPT) :]
    for heading in (
        "## Measured decisions",
        "**The fast reader instead of a YAML parser for Nodes**",
        "**`fastdump` instead of PyYAML's emitter**",
        "**Output as slices of the input's bytes",
        "**A plain stream rewritten document by document**",
        "**Leaving with `os._exit` after flushing**",
        "**CEL from a library: cel-expr-python**",
        "<!-- kpt-compact:begin -->",
    ):
        assert heading in kept, heading
