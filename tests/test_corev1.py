"""The core/v1 types a WorkloadRun embeds are derived from the pinned CRDs, not copied."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from krm_fn.api import corev1, models
from krm_fn.api.fields import fields_of
from tests.k8s_schemas import shared_dir

CRD = shared_dir() / "schemas" / "crds" / "trainer.kubeflow.org_trainingruntimes.yaml"
VIEWS = [models.EnvVar, models.VolumeMount, models.Volume, models.Container,
         models.ResourceRequirements, models.LocalObjectReference,
         models.NodeSelectorRequirement]  # fmt: skip


@pytest.mark.skipif(not CRD.is_file(), reason="needs ../shared/schemas/crds")
def test_committed_table_is_exactly_what_the_pinned_crd_gives(update_golden: bool) -> None:
    derived = corev1.dumps(corev1.derive(yaml.load(CRD.read_text(), yaml.CSafeLoader)))
    if update_golden:
        Path(corev1.TABLE_PATH).write_text(derived)
    assert Path(corev1.TABLE_PATH).read_text() == derived


def test_every_core_type_of_the_models_is_derived_and_documented() -> None:
    assert sorted(v.__name__ for v in VIEWS) == sorted(corev1.PATHS)
    assert set(corev1.PATHS) <= set(corev1.DOCS)


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__)
def test_a_view_declares_only_fields_of_the_pinned_type(view: type[models.CoreV1]) -> None:
    props = corev1.schema(view.__name__)["properties"]
    for f in fields_of(view):
        assert f.key in props, f"{view.__name__}.{f.key} is not a field of the pinned type"


def test_volume_sources_come_from_the_pinned_type() -> None:
    sources = set(corev1.schema("Volume")["properties"]) - {"name"}
    assert {"emptyDir", "persistentVolumeClaim", "hostPath", "csi", "image"} <= sources
    assert models.Volume.model_validate({"name": "v", "image": {}}).source == ("image", {})
    with pytest.raises(
        ValueError, match=r"awsElasticBlockStore\.volumeID: must be a string, got int"
    ):
        models.Volume.model_validate({"name": "v", "awsElasticBlockStore": {"volumeID": 1}})
    with pytest.raises(ValueError, match="unknown field 'emptydir'; did you mean 'emptyDir'"):
        models.Volume.model_validate({"name": "v", "emptydir": {}})
