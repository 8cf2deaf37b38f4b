"""The WorkloadRun field reference (docs/workloadrun-reference.md) is generated from the models.

Regenerate with ``.venv/bin/python -m krm_fn.api.reference > docs/workloadrun-reference.md``
(or ``pytest tests/test_reference.py --update-golden``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from pydantic import ConfigDict, create_model

from krm_fn.api import field_docs
from krm_fn.api.config import FunctionOptions
from krm_fn.api.fields import fields_of
from krm_fn.api.models import GangScheduler, WorkloadRun
from krm_fn.api.reference import MissingDocs, documented_models, reference

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "workloadrun-reference.md"


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


def test_every_field_of_every_model_has_a_row_in_its_section() -> None:
    text = reference()
    models = documented_models()
    assert WorkloadRun in models and FunctionOptions in models
    for model in models:
        section = _section(text, model)
        for f in fields_of(model):
            assert re.search(rf"^\| `{re.escape(f.key)}` \|", section, re.M), (
                f"{model.__name__}.{f.key} has no row"
            )


def test_a_field_without_words_fails_the_generation() -> None:
    docs = dict(field_docs.FIELD_DOCS)
    del docs["WorkloadRunSpec.numNodes"]
    with pytest.raises(
        MissingDocs, match=r"without an entry in FIELD_DOCS: WorkloadRunSpec\.numNodes"
    ):
        reference(docs)


def test_an_entry_naming_no_field_fails_the_generation() -> None:
    docs = dict(field_docs.FIELD_DOCS)
    docs["WorkloadRunSpec.numNode"] = docs["WorkloadRunSpec.numNodes"]
    with pytest.raises(MissingDocs, match=r"naming no field: WorkloadRunSpec\.numNode\b"):
        reference(docs)


def test_defaults_and_constraints_are_read_from_the_models() -> None:
    text = reference()
    gang = _section(text, GangScheduler)
    assert f"`{GangScheduler.model_fields['queue'].default}`" in gang
    assert f"`{GangScheduler.model_fields['queue_label_key'].default}`" in gang
    spec = text[text.index("## `spec` (WorkloadRunSpec)") :]
    assert re.search(r"^\| `numNodes` \| integer \(≥ 1\)\..*\| \*\*required\*\* \|", spec, re.M)
    assert re.search(r"^\| `image` \| string \(non-empty\)\..*\| \*\*required\*\* \|", spec, re.M)


def test_render_constants_fill_in_computed_defaults() -> None:
    from krm_fn.render import DEFAULT_TIMEOUT

    row = next(line for line in reference().splitlines() if line.startswith("| `timeoutPerJob`"))
    assert f"| `{DEFAULT_TIMEOUT}` |" in row


def test_platform_and_gpu_options_list_the_accepted_names() -> None:
    from krm_fn.platforms.detect import PLATFORMS
    from krm_fn.platforms.gpu import GPU_ARCHITECTURES

    options = _section(reference(), FunctionOptions)
    assert ", ".join(f"`{p}`" for p in PLATFORMS) in options
    assert ", ".join(f"`{a}`" for a in GPU_ARCHITECTURES) in options


@pytest.mark.parametrize(
    "key", sorted(k for k in field_docs.FIELD_DOCS if k != "FunctionOptions.registryPassword")
)
def test_every_example_is_a_valid_value_of_its_field(key: str) -> None:
    model_name, field_key = key.split(".", 1)
    (model,) = [m for m in documented_models() if m.__name__ == model_name]
    (name,) = [f.name for f in fields_of(model) if f.key == field_key]
    info = model.model_fields[name]
    example = yaml.safe_load(field_docs.FIELD_DOCS[key].example)
    assert isinstance(example, dict) and list(example) == [field_key]
    strict = model.model_config.get("strict", False)
    tp = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
    probe = create_model("Probe", __config__=ConfigDict(strict=strict), value=(tp, ...))
    probe.model_validate({"value": example[field_key]})  # raises on a value the field refuses


def test_the_minimal_workloadrun_in_the_reference_is_valid() -> None:
    block = re.search(r"```yaml\n(.*?)```", reference(), re.S)
    assert block
    WorkloadRun.model_validate(yaml.safe_load(block.group(1)))


def test_the_readme_links_the_reference() -> None:
    assert "docs/workloadrun-reference.md" in (REPO / "README.md").read_text()
