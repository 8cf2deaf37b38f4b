"""The WorkloadRun field reference (docs/workloadrun-reference.md) is generated from the models.

Regenerate with ``.venv/bin/python -m krm_fn.api.reference > docs/workloadrun-reference.md``
(or ``pytest tests/test_reference.py --update-golden``). Every example it shows is rendered
here (or refused, where its field's text starts with "Refused").
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.api.fields import FieldView, fields_of
from krm_fn.api.reference import MissingDocs, documented_models, example_yaml, reference
from krm_fn.entry.run import run_krm
from tests.builders import node, nodes, rl

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "workloadrun-reference.md"
PLATFORMS_DOC = REPO / "docs" / "platforms.md"


def test_committed_reference_is_what_the_models_generate(update_golden: bool) -> None:
    generated = reference()
    if update_golden:
        DOC.write_text(generated)
    assert DOC.read_text() == generated, (
        "docs/workloadrun-reference.md is stale: run "
        "`.venv/bin/python -m krm_fn.api.reference > docs/workloadrun-reference.md`"
    )


def test_module_command_prints_the_reference() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "krm_fn.api.reference"], capture_output=True, text=True, check=True
    )
    assert proc.stdout == reference()


def _section(text: str, model: type[Any]) -> str:
    start = text.index(f'<a id="{model.__name__.lower()}"></a>')
    end = text.find('<a id="', start + 1)
    return text[start : end if end != -1 else None]


def test_every_field_of_every_model_has_a_row_with_its_own_words() -> None:
    text = reference()
    documented = documented_models()
    assert {models.WorkloadRun, models.JobTemplate, models.JobSpec, FunctionOptions} <= set(
        documented
    )
    for model in documented:
        section = _section(text, model)
        for f in fields_of(model):
            row = re.search(rf"^\| `{re.escape(f.key)}` \|.*$", section, re.M)
            assert row and f.description and f.description.split("`")[0] in row.group(0)


def test_a_field_without_a_description_fails_the_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(models.WorkloadRunSpec.model_fields["num_nodes"], "description", None)
    with pytest.raises(MissingDocs, match=r"without a Field\(description=...\): WorkloadRunSpec\."):
        reference()


def test_defaults_and_constraints_are_read_from_the_models() -> None:
    text = reference()
    gang = _section(text, models.GangScheduler)
    assert f"`{models.DEFAULT_QUEUE}`" in gang and f"`{models.DEFAULT_QUEUE_LABEL_KEY}`" in gang
    spec = _section(text, models.WorkloadRunSpec)
    assert re.search(r"^\| `numNodes` \| integer \(≥ 1\) \| \*\*required\*\* \|", spec, re.M)
    assert re.search(r"^\| `image` \| string \(non-empty\) \| \*\*required\*\* \|", spec, re.M)


def test_the_render_default_timeout_is_the_one_the_description_states() -> None:
    from krm_fn.render import DEFAULT_TIMEOUT

    row = next(line for line in reference().splitlines() if line.startswith("| `timeoutPerJob`"))
    assert f"Unset: {DEFAULT_TIMEOUT}," in row


# --- every example is rendered ---------------------------------------------------------------

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
INVENTORY = [
    *nodes(
        4,
        labels={
            "topology.kubernetes.io/zone": "a",
            "topology.k8s.aws/network-node-layer-1": "nn-0001",  # the topologyDomain example
            "example.com/rack": "r1",  # the topologyKey example's label
        },
    ),
    *(node(f"tainted-0{i}", taints=[TAINT]) for i in (1, 2)),
]
SITE_CATALOG = next(
    d
    for d in map(yaml.safe_load, re.findall(r"```yaml\n(.*?)```", PLATFORMS_DOC.read_text(), re.S))
    if isinstance(d, dict) and set(d) == {"version", "platforms"}
)
"""The site catalog of docs/platforms.md, which the ``platformCatalog`` example names."""
EXCLUSIVE = {
    models.Framework: {"mpi", "torch", "exec"},
    models.TorchFramework: {"script", "module"},
    models.ConfigSpec: {"inline", "configMapRef"},
}
"""Fields that exclude each other (their text says so): an example of one replaces the others."""
NEEDS = {"volumeMounts": "volumes"}
"""A spec field whose example names what another field's example declares."""
COMPANIONS = {
    "registry": {
        "registryUsername": "$oauthtoken",
        "registryPasswordEnv": "NGC_API_KEY",
        "plainPullSecret": True,
    },
    "registrySecretStore": {"registrySecretKey": "k"},
    "topologyKey": {"topologyDomain": "r1"},
}
"""Options an option's example needs beside it (the text says they go together)."""
COMPANIONS |= {k: {"registry": "nvcr.io", **COMPANIONS["registry"]} for k in
               ("registryUsername", "registryPasswordEnv", "plainPullSecret")}  # fmt: skip
COMPANIONS |= {k: {"registry": "nvcr.io", "registryUsername": "u", "registrySecretStore": "s",
               "registrySecretKey": "k"} for k in ("registrySecretKey", "registrySecretProperty")}  # fmt: skip
COMPANIONS["registrySecretStore"] |= {"registry": "nvcr.io", "registryUsername": "u"}


def minimal_run() -> dict[str, Any]:
    """The reference's own minimal WorkloadRun (its first YAML block)."""
    block = re.search(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
    assert block
    run: dict[str, Any] = yaml.safe_load(block.group(1))
    return run


def _parents() -> dict[type[BaseModel], tuple[type[BaseModel], FieldView, bool]]:
    """Each documented model -> the field that first holds it (and whether as a list)."""
    out: dict[type[BaseModel], tuple[type[BaseModel], FieldView, bool]] = {}
    for model in documented_models():
        for f in fields_of(model):
            for sub in _models_in(f.annotation):
                out.setdefault(sub, (model, f, "list[" in str(f.annotation)))
    return out


def _models_in(tp: Any) -> list[type[BaseModel]]:
    from krm_fn.api.fields import iter_models

    return list(iter_models(tp))


def _place(model: type[BaseModel], key: str, value: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(WorkloadRun, options) showing ``key: value`` of ``model`` in a run that needs nothing else."""
    if model is FunctionOptions:
        return minimal_run(), {**COMPANIONS.get(key, {}), key: value}
    if model is models.WorkloadRun:
        run = minimal_run()
        run[key] = value
        return run, {}
    if model is models.JobTemplate:
        run = minimal_run()
        run["spec"]["overrides"] = [{"when": {}, "jobTemplate": {key: value}}]
        return run, {}
    parent, holder, listed = _parents()[model]
    if parent in (models.JobTemplate, models.JobSpec, models.JobWorkload):
        return _place(parent, holder.key, {key: value})
    if parent is models.WorkloadRun:
        shown = minimal_run()[holder.key]
    else:
        assert holder.examples, f"{parent.__name__}.{holder.key} needs an example to hold {key}"
        shown = copy.deepcopy(holder.examples[0][0] if listed else holder.examples[0])
    if key in EXCLUSIVE.get(model, ()):
        shown = {k: v for k, v in shown.items() if k not in EXCLUSIVE[model]}
    if key in NEEDS:
        shown[NEEDS[key]] = _example(model, NEEDS[key])
    instance = {**shown, key: value}
    return _place(parent, holder.key, [instance] if listed else instance)


def _example(model: type[BaseModel], key: str) -> Any:
    return next(f.examples[0] for f in fields_of(model) if f.key == key and f.examples)


def _examples() -> list[Any]:
    out = [pytest.param(models.WorkloadRun, None, None, id="the-minimal-workloadrun")]
    for model in documented_models():
        for f in fields_of(model):
            for value in f.examples or ():
                out.append(pytest.param(model, f, value, id=f"{model.__name__}.{f.key}"))
    return out


@pytest.mark.parametrize(("model", "field", "value"), _examples())
def test_every_example_of_the_reference_is_rendered_or_refused_as_its_text_says(
    model: type[BaseModel],
    field: FieldView | None,
    value: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("NGC_API_KEY", "not-a-real-key")
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump(node("gpu-node-09")))
    if field is None:
        run, options = minimal_run(), {}
    else:
        assert example_yaml(field.key, value) in DOC.read_text()
        run, options = _place(model, field.key, value)
    config = {"apiVersion": "fn.nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRunRender"}
    fc = {**config, "metadata": {"name": "fn"}, "spec": options} if options else None
    for path in (options or {}).get("platformCatalog", ()):  # the site catalog docs/ shows
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(yaml.safe_dump(SITE_CATALOG))
    stdin = yaml.safe_dump(rl([run, *copy.deepcopy(INVENTORY)], fc)).encode()
    out = run_krm(stdin, cwd=tmp_path)
    refused = field is not None and (field.description or "").startswith("Refused")
    assert (out.exit_code != 0) == refused, "\n".join(out.stderr)


# --- the CRD carries the same words ------------------------------------------------------------


def _crd_schema() -> dict[str, Any]:
    crd = yaml.safe_load((REPO / "deploy" / "workloadrun-crd.yaml").read_text())
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def explain(path: str) -> str:
    """What ``kubectl explain workloadrun.<path>`` prints as the field's description.

    kubectl walks the CRD's schema by property name, stepping into ``items`` of a list.
    """
    schema = _crd_schema()
    for step in path.split("."):
        schema = schema["properties"][step]
        schema = schema.get("items", schema) if schema.get("type") == "array" else schema
    return str(schema.get("description", ""))


def _leaves(schema: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        items = schema["items"]
        if items.get("properties"):
            return _leaves({**items, "description": schema.get("description")}, path + "[]")
    props = schema.get("properties")
    if not props:
        return [(path, schema)]
    return [leaf for k, sub in props.items() for leaf in _leaves(sub, f"{path}.{k}".lstrip("."))]


def test_kubectl_explain_finds_the_field_description_in_the_crd() -> None:
    spec = models.WorkloadRunSpec.model_fields
    assert explain("spec.numNodes") == spec["num_nodes"].description
    assert (
        explain("spec.gangScheduler.queue")
        == models.GangScheduler.model_fields["queue"].description
    )
    assert explain("spec.initContainers.image").startswith("Container image name.")


def test_at_least_95_percent_of_the_crds_leaf_fields_are_described() -> None:
    leaves = _leaves(_crd_schema())
    missing = [p for p, s in leaves if not s.get("description")]
    assert len(leaves) > 400, "the core/v1 types are inlined, not left free-form"
    assert len(missing) <= 0.05 * len(leaves), missing


def test_the_readme_links_the_reference() -> None:
    assert "docs/workloadrun-reference.md" in (REPO / "README.md").read_text()
