"""The function under the real kpt 1.0.0-beta.56: eval, render (twice), failing render."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.helpers import (
    PASSWORD,
    copy_example,
    load_docs,
    need,
    run,
    snapshot,
)
from tests.k8s_schemas import validate_all

pytestmark = pytest.mark.e2e


def _kinds(docs: list[dict]) -> list[str]:
    return [d["kind"] for d in docs]


def test_kpt_render_writes_generated_file_and_keeps_comments(tmp_path: Path) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert proc.returncode == 0, proc.stderr
    out = pkg / "generated" / "my-workload.yaml"
    docs = load_docs(out)
    assert _kinds(docs) == ["ExternalSecret", "TrainingRuntime"] + ["TrainJob"] * 4
    assert validate_all(docs) == []
    wr = (pkg / "workloadrun.yaml").read_text()
    assert "# numNodes is the number of nodes per job group" in wr
    assert "name: my-workload # the TrainJobs are named my-workload-group-<i>" in wr
    assert "config.kubernetes.io/local-config: 'true'" in wr
    assert "internal.config.kubernetes.io" not in out.read_text()
    assert PASSWORD not in proc.stderr + proc.stdout


def test_kpt_render_twice_leaves_the_package_byte_identical(tmp_path: Path) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    assert run([kpt, "fn", "render", "--allow-exec", str(pkg)]).returncode == 0
    first = snapshot(pkg)
    again = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert again.returncode == 0, again.stderr
    assert snapshot(pkg) == first


def test_kpt_fn_eval_with_fn_config(tmp_path: Path) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    cfg = tmp_path / "fn-config.yaml"
    shutil.move(pkg / "fn-config.yaml", cfg)
    (pkg / "Kptfile").unlink()
    # a --fn-config file carries no package annotations: its relative `inventory: [nodes.yaml]`
    # resolves against the working directory, the package here (kpt skips it: .krmignore)
    proc = run([kpt, "fn", "eval", ".", "--exec", "workloadrun-fn", "--fn-config", str(cfg)], pkg)
    assert proc.returncode == 0, proc.stderr
    docs = load_docs(pkg / "generated" / "my-workload.yaml")
    assert _kinds(docs).count("TrainJob") == 4
    assert validate_all(docs) == []


def test_kpt_render_of_an_invalid_workloadrun_fails_and_touches_nothing(tmp_path: Path) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    wr = pkg / "workloadrun.yaml"
    wr.write_text(wr.read_text().replace("numNodes: 4", "numNodes: 4\n  envv: []"))
    before = snapshot(pkg)
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert proc.returncode != 0
    assert "unknown field 'envv'" in proc.stderr
    assert "[FAIL]" in proc.stderr
    assert snapshot(pkg) == before


def test_kpt_fn_eval_from_outside_the_package_says_where_it_looked_and_why(
    tmp_path: Path,
) -> None:
    """issue 27: the README's package evaluated from the repository root. kpt fn eval passes
    the --fn-config file's content without saying where the file is (kpt's runfn reads it
    with no path annotation), so the relative inventory path can only lead from the working
    directory; the error says so, and the command it suggests works."""
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    before = snapshot(pkg)
    rel = "kpt-basic"
    cmd = [
        kpt,
        "fn",
        "eval",
        rel,
        "--exec",
        "workloadrun-fn",
        "--fn-config",
        f"{rel}/fn-config.yaml",
    ]
    proc = run([*cmd, "--truncate-output=false"], tmp_path)
    assert proc.returncode != 0
    assert (
        "the inventory option (nodes.yaml) leads to "
        f"{tmp_path}/nodes.yaml, which does not exist: relative paths are relative to the "
        f"working directory ({tmp_path}), because nothing says where the functionConfig file "
        "is (kpt fn eval --fn-config and kustomize do not; kpt fn render does): run from the "
        "directory they are relative to (cd PACKAGE && kpt fn eval . --exec workloadrun-fn "
        "--fn-config fn-config.yaml), use kpt fn render, or give an absolute path"
    ) in proc.stderr
    assert snapshot(pkg) == before

    fixed = run(
        [kpt, "fn", "eval", ".", "--exec", "workloadrun-fn", "--fn-config", "fn-config.yaml"], pkg
    )
    assert fixed.returncode == 0, fixed.stderr
    assert _kinds(load_docs(pkg / "generated" / "my-workload.yaml")).count("TrainJob") == 4
    rendered = run([kpt, "fn", "render", "--allow-exec", rel], tmp_path)  # from anywhere
    assert rendered.returncode == 0, rendered.stderr


def test_kpt_fn_render_names_the_config_directory_a_missing_inventory_leads_from(
    tmp_path: Path,
) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    (pkg / "nodes.yaml").rename(pkg / "fleet.yaml")
    proc = run([kpt, "fn", "render", "--allow-exec", "--truncate-output=false", str(pkg)], tmp_path)
    assert proc.returncode != 0
    assert (
        f"the inventory option (nodes.yaml) leads to {pkg}/nodes.yaml, which does not exist: "
        f"relative paths are relative to the directory of the functionConfig file ({pkg}), "
        "where kpt fn render says the file is"
    ) in proc.stderr
