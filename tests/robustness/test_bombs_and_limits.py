"""YAML bombs, deep nesting, oversized input and Python tags: bounded, refused, never run.

The console-script cases here pass with the current loader; the ones that need
``krm_fn.io.limits`` wired into ``krm_fn.io.yamlio`` are in ``test_regressions.py``. The pure checks of
``krm_fn.io.limits`` are tested directly below.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from krm_fn.io import limits
from tests.golden.make_inputs import HERE as GOLDEN
from tests.robustness import bombs
from tests.robustness.helpers import assert_clean_refusal, dump, load, mpi_run, nodes, rl, run_fn

TIME_LIMIT_S = 10.0
"""CPU seconds a refusal may take. Limits are asserted on CPU time (``Proc.cpu_seconds``,
``time.process_time``), which parallel test workers and other jobs on the machine do not
inflate; the wall-clock kill (:data:`KILL_AFTER_S`) only stops a runaway child."""
KILL_AFTER_S = 6 * TIME_LIMIT_S
MEMORY_LIMIT = 1024**3
REPO = Path(__file__).resolve().parents[2]


def _python_tag_inputs(marker: Path) -> dict[str, bytes]:
    touch = f"touch {marker}"
    return {
        "python-object-apply-os-system-never-constructed": (
            f"!!python/object/apply:os.system [{touch!r}]\n".encode()
        ),
        "python-object-tag-never-constructed": (
            bombs.CM_HEAD + "  x: !!python/object:os.system {}\n"
        ).encode(),
        "python-object-new-in-resourcelist-item-never-constructed": (
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
            f"  data: {{k: !!python/object/new:os.system [{touch!r}]}}\n"
        ).encode(),
        "python-name-tag-never-resolved": (
            bombs.CM_HEAD + "  x: !!python/name:os.system ''\n"
        ).encode(),
        "python-exec-via-builtins-never-run": (
            f"!!python/object/apply:builtins.exec [\"open('{marker}', 'w')\"]\n".encode()
        ),
    }


@pytest.mark.parametrize(
    "case",
    list(_python_tag_inputs(Path("/unused"))),
)
def test_python_tags_are_refused_and_never_executed(case: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    data = _python_tag_inputs(marker)[case]
    proc = run_fn(data, timeout=KILL_AFTER_S)
    assert_clean_refusal(
        proc, data, "malformed YAML: could not determine a constructor for the tag"
    )
    assert "python/" in proc.stderr
    assert not marker.exists(), "a !!python tag was constructed"


@pytest.mark.parametrize(
    ("depth", "kind"),
    [(1_000, "seq"), (100_000, "seq"), (100_000, "map"), (300, "seq")],
    ids=[
        "deep-nesting-1000-refused-quickly",
        "deep-nesting-100k-sequences-refused-quickly",
        "deep-nesting-100k-mappings-refused-quickly",
        "deep-nesting-300-refused-before-recursion-overflows",
    ],
)
def test_deep_nesting_is_refused_within_time_and_memory(depth: int, kind: str) -> None:
    data = bombs.deep_flow(depth, kind).encode()
    proc = run_fn(data, timeout=KILL_AFTER_S)
    assert_clean_refusal(proc, data, "<stdin>: ")
    assert "nest" in proc.stderr  # "exceeded maximum nesting depth" / "nested too deeply"
    assert proc.cpu_seconds < TIME_LIMIT_S
    assert proc.max_rss_bytes < MEMORY_LIMIT


@pytest.mark.parametrize(
    ("repeat", "count"),
    [(10_000_000, 2), (1000, 40)],
    ids=["repeat-count-of-ten-million-refused-quickly", "groups-times-repeat-count-bounded"],
)
def test_tiny_input_asking_for_millions_of_trainjobs_is_refused(repeat: int, count: int) -> None:
    run_ = mpi_run(numNodes=1, orchestration={"repeatCount": repeat})
    data = dump(rl([run_, *nodes(count, provider="")]))
    proc = run_fn(data, timeout=KILL_AFTER_S)
    assert_clean_refusal(proc, data, "WorkloadRun x: spec.orchestration.repeatCount: ")
    assert proc.cpu_seconds < TIME_LIMIT_S and proc.max_rss_bytes < MEMORY_LIMIT


def test_moderately_nested_passthrough_object_is_accepted() -> None:
    data = bombs.deep_flow(40).encode()
    proc = run_fn(data, timeout=KILL_AFTER_S)
    assert proc.returncode == 0, proc.stderr
    assert load(proc.stdout)["data"]["deep"] == yaml.safe_load(data)["data"]["deep"]


# --- krm_fn.io.limits, the pure pre-scan ----------------------------------------------------------


def _refusal(text: str | bytes) -> str:
    with pytest.raises(limits.LimitExceeded) as info:
        limits.check_yaml(text)
    return str(info.value)


def test_billion_laughs_refused_quickly_by_the_prescan() -> None:
    start = time.process_time()
    msg = _refusal(bombs.billion_laughs())
    assert time.process_time() - start < 1.0
    assert f"aliases expand to more than {limits.MAX_ALIAS_NODES} nodes" in msg
    assert "billion laughs" in msg
    assert "(line " in msg


def test_small_alias_bomb_just_over_the_alias_budget_is_refused() -> None:
    # 5 levels of fan-out 11: 161051 strings reached through aliases.
    assert "aliases expand" in _refusal(bombs.billion_laughs(levels=5, fan_out=11))


def test_alias_tower_refused_for_its_expanded_depth() -> None:
    msg = _refusal(bombs.alias_tower())
    assert f"nests deeper than {limits.MAX_DEPTH} levels once expanded" in msg
    assert "YAML alias *t0 " in msg


def test_deep_text_refused_at_the_depth_limit() -> None:
    limits.check_yaml(bombs.deep_flow(limits.MAX_DEPTH - 2))
    msg = _refusal(bombs.deep_flow(limits.MAX_DEPTH + 1))
    assert f"YAML nested deeper than {limits.MAX_DEPTH} levels (line 6" in msg


def test_too_many_nodes_refused_while_scanning() -> None:
    start = time.process_time()
    msg = _refusal(bombs.many_nodes(limits.MAX_NODES // 2 + 10))
    assert time.process_time() - start < TIME_LIMIT_S
    assert f"more than {limits.MAX_NODES} YAML nodes" in msg


def test_oversized_input_refused_before_any_parsing() -> None:
    data = bombs.oversized()
    start = time.process_time()
    msg = _refusal(data)
    assert time.process_time() - start < 0.5
    assert f"over the {limits.MAX_INPUT_BYTES // 1024 // 1024} MiB limit" in msg


def test_input_exactly_at_the_size_limit_is_not_refused_for_size() -> None:
    limits.check_size(limits.MAX_INPUT_BYTES)
    with pytest.raises(limits.LimitExceeded):
        limits.check_size(limits.MAX_INPUT_BYTES + 1)


def test_a_few_legitimate_aliases_are_accepted() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
        "data: &d {a: '1', b: '2'}\n---\napiVersion: v1\nkind: ConfigMap\n"
        "metadata: {name: y, labels: &l {app: z}}\ndata: {c: '3'}\n"
    )
    limits.check_yaml(text)


def test_anchors_are_scoped_to_their_document() -> None:
    # A big anchor in one document, aliased many times in the next: YAML scopes anchors to
    # their document, so the scan does not count it there and the loader reports the alias.
    big = "[" + ", ".join(["x"] * 1000) + "]"
    text = f"a: &x {big}\n---\nb: [{', '.join(['*x'] * 200)}]\n"
    limits.check_yaml(text)
    with pytest.raises(yaml.composer.ComposerError, match="undefined alias"):
        list(yaml.safe_load_all(text))


def test_malformed_yaml_is_reported_as_yaml_error_not_as_a_limit() -> None:
    with pytest.raises(yaml.YAMLError):
        limits.check_yaml("a: [\n")


def test_every_golden_input_and_example_is_within_the_limits() -> None:
    files = sorted(GOLDEN.glob("*/input.yaml")) + sorted(
        (REPO / "kustomization-examples").rglob("*.yaml")
    )
    assert len(files) > 30
    for f in files:
        limits.check_yaml(f.read_bytes())


def test_the_scan_does_not_change_what_is_loaded() -> None:
    text = (GOLDEN / "basic-mpi-16-nodes-four-groups-with-pull-secret" / "input.yaml").read_text()
    before = yaml.safe_load(text)
    limits.check_yaml(text)
    assert yaml.safe_load(text) == before


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (bombs.billion_laughs(), "aliases expand to more than"),
        (bombs.alias_tower(), "nests deeper than"),
        (bombs.many_nodes(limits.MAX_NODES // 2 + 10), "YAML nodes"),
    ],
    ids=[
        "wired-limits-refuse-billion-laughs",
        "wired-limits-refuse-alias-tower",
        "wired-limits-refuse-too-many-nodes",
    ],
)
def test_limits_wired_into_load_all_refuse_bombs_as_input_errors(
    text: str, fragment: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How the fix in yamlio.load_all behaves (see the krm_fn.io.limits docstring)."""
    from krm_fn.entry.run import run_krm
    from krm_fn.io import yamlio

    original = yamlio.load_all

    def load_all(data: str | bytes, source: str = "<stdin>") -> list[object]:
        try:
            limits.check_yaml(data)
        except limits.LimitExceeded as exc:
            raise yamlio.YAMLLimitError(f"{source}: {exc}") from None
        except yaml.YAMLError:
            pass  # the loader reports it as before
        return original(data, source)

    monkeypatch.setattr(yamlio, "load_all", load_all)
    start = time.process_time()
    out = run_krm(text.encode())
    assert time.process_time() - start < TIME_LIMIT_S
    assert out.exit_code == 1
    assert out.stderr[0].startswith("[error] <stdin>: ")
    assert fragment in out.stderr[0]
    assert out.stderr[-1] == "workloadrun-fn: 1 error(s); nothing rendered"
