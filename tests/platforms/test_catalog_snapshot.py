"""The JSON snapshot of the bundled catalog: in sync with the YAML, used only while current.

``krm_fn/data/platforms.json`` is generated from ``krm_fn/data/platforms.yaml``; rewrite it
with ``pytest tests/platforms --update-golden`` (or ``UPDATE_GOLDEN=1``, or
``python -m krm_fn.platforms.snapshot``).
"""

from __future__ import annotations

import fnmatch
import json
import os
import pickle
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
import yaml

from krm_fn.platforms import load, snapshot
from krm_fn.platforms.catalog import Catalog, CatalogError
from krm_fn.platforms.catalog_file import parse_catalog, validate_catalog_data
from krm_fn.platforms.load import load_catalog
from krm_fn.platforms.overlay import make_context, resolve
from krm_fn.platforms.snapshot import snapshot_text, write_snapshot

REPO = Path(__file__).resolve().parents[2]
YAML_FILE = REPO / "krm_fn" / "data" / "platforms.yaml"
JSON_FILE = REPO / "krm_fn" / "data" / "platforms.json"


def yaml_text() -> str:
    return YAML_FILE.read_text(encoding="utf-8")


@pytest.fixture
def fresh_default(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forget the cached bundled catalog (restored afterwards)."""
    monkeypatch.setattr(load, "_DEFAULT", None)
    yield


# --------------------------------------------------------------------------- in sync


def test_snapshot_is_generated_from_the_yaml(update_golden: bool) -> None:
    wanted = snapshot_text(yaml_text(), str(YAML_FILE))
    if update_golden:
        write_snapshot(YAML_FILE, JSON_FILE)
    actual = JSON_FILE.read_text(encoding="utf-8") if JSON_FILE.exists() else ""
    assert actual == wanted, (
        "krm_fn/data/platforms.json is stale: rerun with --update-golden "
        "(or python -m krm_fn.platforms.snapshot)"
    )


def test_snapshot_holds_exactly_the_parsed_yaml() -> None:
    data = json.loads(JSON_FILE.read_text(encoding="utf-8"))
    assert set(data) == {"comment", "yaml", "catalog"}
    assert data["yaml"] == yaml_text()
    assert data["catalog"] == yaml.load(yaml_text(), Loader=yaml.SafeLoader)


def test_snapshot_data_passes_the_full_validation() -> None:
    data = json.loads(JSON_FILE.read_text(encoding="utf-8"))
    assert validate_catalog_data(data["catalog"]) == []


def test_bundled_catalog_equals_the_validated_yaml(fresh_default: None) -> None:
    assert load_catalog() == parse_catalog(yaml_text()) == load_catalog(YAML_FILE)


def test_the_wheel_ships_the_snapshot() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["krm_fn"]
    for name in ("data/platforms.yaml", "data/platforms.json"):
        assert any(fnmatch.fnmatch(name, g) for g in globs), f"{name} is not package data"


def test_write_snapshot_reports_whether_it_changed(tmp_path: Path) -> None:
    source = tmp_path / "c.yaml"
    source.write_text("version: 1\nentries:\n  - {name: x, source: s @ 1, topologyKey: k}\n")
    target = tmp_path / "c.json"
    assert write_snapshot(source, target) is True
    assert write_snapshot(source, target) is False
    assert json.loads(target.read_text())["catalog"]["entries"][0]["name"] == "x"


def test_no_snapshot_is_made_of_an_invalid_catalog() -> None:
    with pytest.raises(CatalogError, match="field 'version': value 2 is not allowed; expected 1"):
        snapshot_text("version: 2\nentries: []\n")


# --------------------------------------------------------------------------- which source


def _tiny_snapshot(yaml_of_snapshot: str) -> str:
    """A snapshot whose catalog (one entry, 'from-snapshot') differs from the bundled one."""
    data = {"version": 1, "entries": [{"name": "from-snapshot", "source": "s", "topologyKey": "k"}]}
    return json.dumps({"yaml": yaml_of_snapshot, "catalog": data})


def test_a_current_snapshot_is_what_gets_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_default: None
) -> None:
    path = tmp_path / "platforms.json"
    path.write_text(_tiny_snapshot(yaml_text()), encoding="utf-8")
    monkeypatch.setattr(snapshot, "SNAPSHOT_PATH", str(path))
    assert load_catalog().names == ("from-snapshot",)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(None, id="missing-snapshot"),
        pytest.param("{not json", id="corrupt-snapshot"),
        pytest.param("[]", id="snapshot-not-a-mapping"),
        pytest.param(_tiny_snapshot("version: 1\nentries: []\n"), id="snapshot-of-another-yaml"),
    ],
)
def test_an_unusable_snapshot_falls_back_to_the_validated_yaml(
    content: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_default: None
) -> None:
    path = tmp_path / "platforms.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    monkeypatch.setattr(snapshot, "SNAPSHOT_PATH", str(path))
    assert load_catalog() == parse_catalog(yaml_text())


def test_a_custom_catalog_is_always_validated(tmp_path: Path) -> None:
    path = tmp_path / "custom.yaml"
    path.write_text(
        "version: 1\nentries:\n"
        "  - {name: a, source: s, topologykey: k}\n"
        "  - {name: b, source: s, gpusPerNode: 0}\n"
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    assert str(info.value).startswith(f"invalid platform catalog {path}:")
    assert info.value.problems == (
        "entry 'a' (#0): field 'topologykey': unknown field 'topologykey': did you mean "
        "'topologyKey'?",
        "entry 'b' (#1): field 'gpusPerNode': Input should be greater than or equal to 1; "
        "got int 0",
    )


# --------------------------------------------------------------------------- cold start

_PROBE = """
import json, sys
from krm_fn.platforms import load_catalog, make_context, resolve
catalog = load_catalog()
ctx = make_context(catalog, platform="aws", gpu_architecture="h100", framework="mpi")
resolve(catalog, ctx)
print(json.dumps(sorted(sys.modules)))
"""


@pytest.fixture(scope="module")
def loaded_modules() -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, check=True
    )
    modules: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return modules


@pytest.mark.parametrize(
    "module",
    [
        pytest.param("pydantic", id="no-pydantic"),
        pytest.param("pydantic_core", id="no-pydantic-core"),
        pytest.param("yaml", id="no-yaml-parse-of-the-bundled-catalog"),
        pytest.param("krm_fn.platforms.catalog_file", id="no-catalog-file-schema"),
        pytest.param("krm_fn.api", id="no-api-models-or-error-wording"),
        pytest.param("importlib.resources", id="no-importlib-resources"),
        pytest.param("importlib.metadata", id="no-importlib-metadata"),
    ],
)
def test_loading_and_resolving_the_bundled_catalog_does_not_import(
    module: str, loaded_modules: list[str]
) -> None:
    assert "krm_fn.platforms.catalog" in loaded_modules
    hits = [m for m in loaded_modules if m == module or m.startswith(module + ".")]
    assert not hits, f"loading the bundled catalog imported {hits}"


# --------------------------------------------------------------------------- immutability


def test_catalog_objects_are_frozen_values() -> None:
    catalog = load_catalog()
    entry = catalog.entries[0]
    with pytest.raises(FrozenInstanceError):
        entry.name = "other"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del catalog.entries  # type: ignore[misc]
    assert hash(entry.when) == hash(pickle.loads(pickle.dumps(entry.when)))
    assert pickle.loads(pickle.dumps(catalog)) == catalog
    assert repr(entry.env[0] if entry.env else entry.when).startswith(("EnvVarSpec(", "WhenSpec("))


def test_overlays_compare_and_copy_by_value() -> None:
    catalog: Catalog = load_catalog()
    ctx = make_context(catalog, platform="aws", gpu_architecture="h100", framework="mpi")
    overlay = resolve(catalog, ctx)
    assert overlay == resolve(catalog, ctx)
    assert pickle.loads(pickle.dumps(overlay)) == overlay
    assert overlay != resolve(
        catalog,
        make_context(catalog, platform="gcp", gpu_architecture="h100", framework="mpi"),
    )
