"""Platforms as data: a platform added to the table is detected, previewed, kept and applied.

Issue 25, "Done when": a platform added to a copy of the table only (no code edit), and the
same platform in a site catalog file named by the function config (``platformCatalog``),
each render end to end: detection from realistic nodes (the DOKS GPU droplets of
tests/golden/unknown-cloud-provider-is-a-warning-naming-the-settings, written after public
objects, see tests/golden/FLEET-FIXTURES.md), the ``--platform`` preview, the compact
inventory keeping the labels it detects and partitions by, its overrides applied and listed
in ``nvcre.nvidia.com/applied-overrides``. The site file is the example of docs/platforms.md.
Also: the providerID prefixes and topology label families live in the table file only.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from krm_fn.entry.run import run_krm
from krm_fn.gitops import compact_inventory as ci
from krm_fn.io.output import is_generated
from krm_fn.platforms import catalog, gpu
from tests.builders import rl

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "platforms.md"
DOKS = REPO / "tests" / "golden" / "unknown-cloud-provider-is-a-warning-naming-the-settings"
ANN_PLATFORM = "nvcre.nvidia.com/detected-platform"
ANN_APPLIED = "nvcre.nvidia.com/applied-overrides"


def docs_example(kind: str) -> dict[str, Any]:
    """The YAML example of docs/platforms.md, "A site's own platform", of this kind."""
    section = DOCS.read_text().split("## A site's own platform", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    docs = [yaml.safe_load(b) for b in blocks]
    if kind == "catalog":
        return next(d for d in docs if "platforms" in d)
    return next(d for d in docs if d.get("kind") == kind)


SITE = docs_example("catalog")
PLATFORM = SITE["platforms"][0]["name"]
ENTRY = SITE["platforms"][0]["entries"][0]["name"]


def doks_items() -> list[dict[str, Any]]:
    """The WorkloadRun and the two DOKS H100 nodes of the golden case."""
    items: list[dict[str, Any]] = yaml.safe_load((DOKS / "input.yaml").read_text())["items"]
    return items


def _reset_caches() -> None:
    catalog.bundled.cache_clear()
    catalog._merged.cache_clear()
    gpu.architectures.cache_clear()


@pytest.fixture
def table_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the bundled table with the docs' platform appended to its platforms."""
    text = Path(catalog.BUNDLED_PATH).read_text()
    site = yaml.safe_dump(SITE["platforms"], sort_keys=False)
    copy = tmp_path / "platforms.yaml"
    copy.write_text(
        text.rstrip("\n") + "\n\n" + "\n".join("  " + x for x in site.splitlines()) + "\n"
    )
    monkeypatch.setattr(catalog, "BUNDLED_PATH", str(copy))
    _reset_caches()
    yield copy
    monkeypatch.undo()
    _reset_caches()


def generated(items: list[dict[str, Any]], fc: Mapping[str, Any] | None, cwd: Path) -> Any:
    out = run_krm(yaml.safe_dump(rl(items, dict(fc) if fc else None)).encode(), cwd=cwd)
    assert out.exit_code == 0, out.stderr
    doc = yaml.safe_load(out.stdout)
    return [i for i in doc["items"] if is_generated(i)], doc.get("results", [])


def assert_platform_rendered(objs: list[dict[str, Any]], results: list[dict[str, Any]]) -> None:
    """The site platform was detected, its entry applied and listed, its env forwarded."""
    (job,) = [o for o in objs if o["kind"] == "TrainJob"]
    annotations = job["metadata"]["annotations"]
    assert annotations[ANN_PLATFORM] == PLATFORM
    assert f"catalog:{ENTRY}" in annotations[ANN_APPLIED].split(",")
    args = job["spec"]["trainer"]["args"]
    assert "NCCL_IB_DISABLE=1" in args and args[args.index("NCCL_IB_DISABLE=1") - 1] == "-x"
    assert not any("is not a platform this function knows" in r["message"] for r in results)


def preview_config(extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "fn.nvcre.nvidia.com/v1alpha1",
        "kind": "WorkloadRunRender",
        "metadata": {"name": "preview", **(extra or {})},
        "spec": {"platform": PLATFORM, "gpuArch": "h100"},
    }


def compact_then_render(policy: ci.LabelPolicy, fc: Mapping[str, Any] | None, cwd: Path) -> None:
    run, *nodes = doks_items()
    text = yaml.safe_dump_all(nodes).encode()
    compacted, problems = ci.compact([(text, "nodes.yaml")], policy)
    assert problems == []
    for node in compacted:
        labels = node["metadata"]["labels"]
        assert "doks.digitalocean.com/gpu-brand" in labels  # its detection label
        assert "doks.digitalocean.com/node-pool" in labels  # its topology key
        assert "doks.digitalocean.com/gpu-model" not in labels  # nothing reads this one
    assert_platform_rendered(*generated([run, *compacted], fc, cwd))


# --------------------------------------------------------------------------- a copy of the table


def test_a_platform_added_to_a_copy_of_the_table_is_detected_on_realistic_nodes(
    table_copy: Path, tmp_path: Path
) -> None:
    assert_platform_rendered(*generated(doks_items(), None, tmp_path))


def test_a_platform_added_to_a_copy_of_the_table_is_previewed_on_synthetic_nodes(
    table_copy: Path, tmp_path: Path
) -> None:
    run = doks_items()[0]
    objs, results = generated([run], preview_config(), tmp_path)
    assert_platform_rendered(objs, results)


def test_a_platform_added_to_a_copy_of_the_table_keeps_its_labels_in_the_inventory(
    table_copy: Path, tmp_path: Path
) -> None:
    compact_then_render(ci.LabelPolicy(), None, tmp_path)


def test_without_the_platform_the_same_nodes_are_onprem_with_a_warning(tmp_path: Path) -> None:
    objs, results = generated(doks_items(), None, tmp_path)
    assert objs[0]["metadata"]["annotations"][ANN_PLATFORM] == "onprem"
    assert any("'digitalocean://'" in r["message"] for r in results)


# --------------------------------------------------------------------------- a site catalog file


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A kpt package: the site catalog and a WorkloadRunRender naming it by a relative path."""
    (tmp_path / "platforms").mkdir()
    (tmp_path / "platforms" / "site.yaml").write_text(yaml.safe_dump(SITE, sort_keys=False))
    return tmp_path


def site_config(pkg: Path, **spec: Any) -> dict[str, Any]:
    """The docs' WorkloadRunRender as kpt hands it over (package path annotations)."""
    fc = docs_example("WorkloadRunRender")
    fc["metadata"].setdefault("annotations", {}).update(
        {
            "internal.config.kubernetes.io/package-path": str(pkg),
            "config.kubernetes.io/path": "fn-config.yaml",
        }
    )
    fc["spec"].update(spec)
    return fc


def test_a_site_catalog_named_by_the_function_config_adds_the_platform(
    package: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "kpt-cwd"
    elsewhere.mkdir()
    assert_platform_rendered(*generated(doks_items(), site_config(package), elsewhere))


def test_a_site_catalogs_platform_is_previewed(package: Path, tmp_path: Path) -> None:
    fc = site_config(package, platform=PLATFORM, gpuArch="h100")
    assert_platform_rendered(*generated([doks_items()[0]], fc, tmp_path))


def test_the_inventory_command_keeps_a_site_platforms_labels(package: Path) -> None:
    nodes = doks_items()[1:]
    (package / "nodes.yaml").write_text(yaml.safe_dump_all(nodes))
    command = [sys.executable, "-m", "krm_fn", "inventory", "nodes.yaml"]
    site = ["--platform-catalog", "platforms/site.yaml"]
    kept = subprocess.run(
        [*command, *site], cwd=package, capture_output=True, text=True, check=True
    ).stdout
    plain = subprocess.run(command, cwd=package, capture_output=True, text=True, check=True).stdout
    assert "doks.digitalocean.com/gpu-brand" in kept
    assert "doks.digitalocean.com/gpu-brand" not in plain
    compact_then_render(
        ci.LabelPolicy(catalog=catalog.load_catalog([package / "platforms" / "site.yaml"])),
        site_config(package),
        package,
    )


def test_an_invalid_site_catalog_is_an_option_error_naming_file_platform_and_field(
    package: Path, tmp_path: Path
) -> None:
    broken = {**SITE, "platforms": [{**SITE["platforms"][0], "detect": [{"providerId": "x"}]}]}
    (package / "platforms" / "site.yaml").write_text(yaml.safe_dump(broken))
    out = run_krm(yaml.safe_dump(rl(doks_items(), site_config(package))).encode(), cwd=tmp_path)
    assert out.exit_code == 1
    assert (
        f"[error] option platformCatalog (functionConfig): {package}/platforms/site.yaml: "
        f"platform {PLATFORM!r} (#0): field 'detect[0].providerId': unknown field "
        "'providerId': did you mean 'providerID'?"
    ) in out.stderr


def test_the_site_catalog_option_is_listed_with_its_example() -> None:
    from krm_fn.api.config import FunctionOptions, offered_options

    assert "platformCatalog" in offered_options()
    field = FunctionOptions.model_fields["platform_catalog"]
    assert field.description and field.examples


# --------------------------------------------------------------------------- one home per fact

PROVIDER_PREFIXES = ("aws://", "gce://", "azure://", "ocid1.")
TOPOLOGY_FAMILIES = (
    "topology.k8s.aws/",
    "cloud.google.com/gce-topology-",
    "kubernetes.azure.com/ppg",
)


def test_every_topology_key_of_the_table_is_of_a_family_checked_below() -> None:
    keys = catalog.bundled().topology_keys()
    assert keys and all(k.startswith(TOPOLOGY_FAMILIES) for k in keys), keys


@pytest.mark.parametrize("text", [*PROVIDER_PREFIXES, *TOPOLOGY_FAMILIES])
def test_a_platform_fact_is_written_in_the_table_file_only(text: str) -> None:
    homes = sorted(
        str(path.relative_to(REPO))
        for root in ("krm_fn", "bench")
        for path in (REPO / root).rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and text in path.read_text(errors="ignore")
    )
    assert homes == ["krm_fn/data/platforms.yaml"]


# --------------------------------------------------------------------------- one model


def test_the_table_is_one_frozen_pydantic_model_with_no_snapshot_next_to_it() -> None:
    table = catalog.bundled()
    with pytest.raises(ValidationError, match="frozen"):
        table.entries[0].name = "other"
    assert pickle.loads(pickle.dumps(table)) == table
    assert sorted(p.name for p in (REPO / "krm_fn" / "data").glob("platforms.*")) == [
        "platforms.yaml"
    ]


def test_the_default_topology_key_is_one_accessor_on_the_platform_entry() -> None:
    table = catalog.bundled()
    defaults = {p.name: p.default_topology_key for p in table.platforms if p.default_topology_key}
    assert defaults.keys() == {"aws", "gcp", "azure"}
    assert all(key in table.platform(name).topology_keys for name, key in defaults.items())  # type: ignore[union-attr]
