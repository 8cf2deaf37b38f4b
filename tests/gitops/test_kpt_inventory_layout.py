"""The kpt package layout for a large fleet: the compact inventory is data, not resources.

kpt (kyaml) parses every ``*.yaml`` of a package as resources and writes each back after the
render; at 10,000 Nodes that is minutes (bench/results.md). In the layout of README "kpt (exec
function)" the inventory file is listed in ``.krmignore`` and named by the functionConfig's
``inventory`` option; a relative path in that option resolves against the functionConfig file's
directory (kpt annotates it with ``internal.config.kubernetes.io/package-path``), because kpt
runs an exec function in kpt's own working directory, not the package's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from krm_fn.entry.run import inventory_base, run_krm
from tests.e2e.helpers import EXAMPLES, PASSWORD, copy_example, load_docs, need, run, snapshot

REPO = Path(__file__).resolve().parents[2]


def _fc(annotations: dict[str, str] | None) -> dict[str, object]:
    meta: dict[str, object] = {"name": "render"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "fn.nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRunRender",
            "metadata": meta, "spec": {"inventory": ["nodes.yaml"]}}  # fmt: skip


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (
            {"internal.config.kubernetes.io/package-path": "/pkg",
             "config.kubernetes.io/path": "fn-config.yaml"},
            "/pkg",
        ),
        (
            {"internal.config.kubernetes.io/package-path": "/pkg/sub",
             "internal.config.kubernetes.io/path": "conf/fn-config.yaml"},
            "/pkg/sub/conf",
        ),
        ({"config.kubernetes.io/path": "fn-config.yaml"}, "/work"),
        (None, "/work"),
    ],
    ids=[
        "kpt-config-file-resolves-against-the-package",
        "config-in-a-subfolder-resolves-against-that-folder",
        "a-path-without-package-path-uses-the-working-directory",
        "no-annotations-use-the-working-directory",
    ],
)  # fmt: skip
def test_relative_inventory_paths_resolve_against_the_config_file_under_kpt(
    annotations: dict[str, str] | None, expected: str
) -> None:
    assert inventory_base(_fc(annotations), Path("/work")) == Path(expected)


def _resourcelist(fc: dict[str, object]) -> bytes:
    wr = yaml.safe_load((EXAMPLES / "kpt-basic" / "workloadrun.yaml").read_text())
    return yaml.safe_dump(
        {
            "apiVersion": "config.kubernetes.io/v1",
            "kind": "ResourceList",
            "items": [wr],
            "functionConfig": fc,
        }
    ).encode()


def test_the_inventory_option_from_the_environment_stays_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(EXAMPLES / "kpt-basic" / "nodes.yaml", tmp_path / "fleet.yaml")
    monkeypatch.setenv("WORKLOADRUN_FN_INVENTORY", "fleet.yaml")
    fc = _fc({"internal.config.kubernetes.io/package-path": "/nonexistent",
              "config.kubernetes.io/path": "fn-config.yaml"})  # fmt: skip
    out = run_krm(_resourcelist(fc), cwd=tmp_path)
    assert out.exit_code == 0, out.stderr
    assert out.stdout.count("\n  kind: TrainJob\n") == 4


def test_nodes_arriving_both_as_resources_and_from_the_option_are_an_error(
    tmp_path: Path,
) -> None:
    """The layout without its .krmignore line: every node would count twice."""
    src = EXAMPLES / "kpt-basic" / "nodes.yaml"
    nodes = [d for d in yaml.safe_load_all(src.read_text()) if d]
    rl = yaml.safe_load(_resourcelist(_fc(None)))
    rl["items"] += nodes
    shutil.copy(src, tmp_path / "nodes.yaml")
    out = run_krm(yaml.safe_dump(rl).encode(), cwd=tmp_path)
    assert out.exit_code == 1
    err = "\n".join(out.stderr)
    assert "gpu-node-01, gpu-node-02" in err and "and 11 more" in err
    assert ".krmignore" in err and "inventory option (nodes.yaml)" in err
    assert "kind: TrainJob" not in out.stdout


@pytest.mark.e2e
def test_kpt_renders_the_layout_from_any_directory_and_never_touches_the_inventory(
    tmp_path: Path,
) -> None:
    """The README's kpt package, rendered with kpt started outside it (as CI does), equals the
    render of the same Nodes held as package resources (the form that still works)."""
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path / "layout")
    assert "nodes.yaml" in (pkg / ".krmignore").read_text().splitlines()
    inventory = (pkg / "nodes.yaml").read_bytes()
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)], cwd=Path("/"))
    assert proc.returncode == 0, proc.stderr
    assert (pkg / "nodes.yaml").read_bytes() == inventory, "kpt must not rewrite the inventory"
    assert PASSWORD not in "".join(p.read_text() for p in pkg.rglob("*") if p.is_file())

    # the same package with the Nodes as resources: no .krmignore, no inventory option
    full = copy_example("kpt-basic", tmp_path / "resources")
    (full / ".krmignore").unlink()
    cfg = full / "fn-config.yaml"
    cfg.write_text("".join(
        line for line in cfg.read_text().splitlines(keepends=True)
        if "inventory" not in line
    ))  # fmt: skip
    again = run([kpt, "fn", "render", "--allow-exec", str(full)], cwd=Path("/"))
    assert again.returncode == 0, again.stderr
    generated = snapshot(pkg / "generated")
    assert generated and generated == snapshot(full / "generated")
    kinds = [d["kind"] for d in load_docs(pkg / "generated" / "my-workload.yaml")]
    assert kinds.count("TrainJob") == 4


@pytest.mark.e2e
def test_kpt_without_the_krmignore_line_fails_and_says_how_to_fix_it(tmp_path: Path) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    (pkg / ".krmignore").unlink()
    before = snapshot(pkg)
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)], cwd=Path("/"))
    assert proc.returncode != 0
    assert "list the inventory file in .krmignore" in proc.stderr
    assert snapshot(pkg) == before


# ---------------------------------------------------------------- reading the inventory file

_NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels:
    kubernetes.io/hostname: {name}
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    note: |
      first line

      after a blank line
spec:
  providerID: aws:///us-east-1a/i-{name}
status:
  allocatable:
    nvidia.com/gpu: '8'
  conditions:
  - type: Ready
    status: 'True'
"""


def _full_reader(path: Path) -> list[object]:
    """The Nodes as PyYAML (the full reader) gives them."""
    from krm_fn.fleet.inventory import collect_nodes
    from krm_fn.io.resourcelist import parse_input

    inp = parse_input(path.read_bytes(), path.name, fast=False, documents=False)
    return list(collect_nodes(inp.items))


@pytest.mark.parametrize(
    "text",
    [
        (EXAMPLES / "kpt-basic" / "nodes.yaml").read_text(),
        (EXAMPLES / "argocd-app" / "nodes.yaml").read_text(),
        (REPO / "fixtures" / "nodes-16.yaml").read_text(),
        "# header\n---\n" + _NODE.format(name="a") + "--- # second\n" + _NODE.format(name="b"),
        _NODE.format(name="a") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
        "apiVersion: v1\nkind: List\nitems:\n- " + _NODE.format(name="a").replace("\n", "\n  "),
        "--- {apiVersion: v1, kind: Node, metadata: {name: a}}\n",
        _NODE.format(name="a") + "...\n",
    ],
    ids=[
        "compact-kpt-basic",
        "compact-argocd-app",
        "hand-written-fixture",
        "comments-separators-and-a-block-scalar-with-a-blank-line",
        "a-configmap-among-the-nodes",
        "a-v1-list",
        "flow-style-after-the-separator",
        "document-end-marker",
    ],
)
def test_the_inventory_reader_gives_the_nodes_pyyaml_gives(text: str, tmp_path: Path) -> None:
    from krm_fn.entry.inputs import load_files

    f = tmp_path / "nodes.yaml"
    f.write_text(text)
    expected = _full_reader(f)
    assert expected, "every case holds Nodes"
    assert load_files([f], tmp_path).nodes == expected


def test_the_fast_inventory_reader_reads_the_compact_form_itself(tmp_path: Path) -> None:
    """The compact inventory is what the fast reader is for: it must not fall back."""
    from krm_fn.io.resourcelist import parse_input

    data = (EXAMPLES / "kpt-basic" / "nodes.yaml").read_bytes()
    inp = parse_input(data, "nodes.yaml", documents=False)
    assert inp.fast_list is not None, "the compact inventory fell back to the full reader"
    fast = [n for e in inp.entries() for n in e.nodes]
    assert len(fast) == 16
    f = tmp_path / "nodes.yaml"
    f.write_bytes(data)
    assert fast == _full_reader(f)


def test_a_bad_node_in_the_inventory_is_reported_as_the_full_reader_reports_it(
    tmp_path: Path,
) -> None:
    from krm_fn.entry.inputs import load_files
    from krm_fn.io.resourcelist import InputError

    f = tmp_path / "nodes.yaml"
    f.write_text(_NODE.format(name="a") + "---\napiVersion: v1\nkind: Node\nmetadata: {}\n")
    with pytest.raises(InputError) as fast_err:
        load_files([f], tmp_path)
    with pytest.raises(InputError) as full_err:
        _full_reader(f)
    assert str(fast_err.value) == str(full_err.value)
    assert "nodes.yaml[1]" in str(fast_err.value)
