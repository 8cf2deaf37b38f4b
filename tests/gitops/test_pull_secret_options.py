"""Pull-secret options: which combinations are refused, and where the plain Secret may appear."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from krm_fn.api.config import options_from_config
from krm_fn.builders.external_secret import dockerconfig_template, store_ref
from krm_fn.entry.preview import preview
from krm_fn.gitops.env_options import env_name, with_env

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "preview-password-991"


def _cm(**data: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"registryPullSecret": "s", "registry": "nvcr.io"}, "leave out registry"),
        ({"registrySecretStore": "ngc", "registry": "nvcr.io"}, "missing: registryUsername, registrySecretKey"),
        ({"registry": "r", "registryUsername": "u", "registrySecretStore": "Vault/x",
          "registrySecretKey": "k"}, "write NAME, SecretStore/NAME or ClusterSecretStore/NAME"),
        ({"registry": "r", "registryUsername": "u", "registrySecretStore": "s",
          "registrySecretKey": "k", "registryPasswordEnv": "E"}, "exclude each other"),
        ({"waveRelease": "later"}, "waveRelease"),
    ],
    ids=["existing-secret-with-registry-fields", "store-without-user-and-key",
         "store-of-an-unknown-kind", "store-and-password-env-together", "unknown-wave-release"],
)  # fmt: skip
def test_inconsistent_pull_secret_options_are_refused(data: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        options_from_config(_cm(**data))


def test_store_ref_and_template_hold_no_password_and_escape_the_user() -> None:
    assert store_ref("ngc") == {"kind": "SecretStore", "name": "ngc"}
    assert store_ref("ClusterSecretStore/ngc") == {"kind": "ClusterSecretStore", "name": "ngc"}
    tpl = dockerconfig_template("nvcr.io", 'we"ird')
    assert '"username":"we\\"ird"' in tpl and "{{ .password | toJson }}" in tpl


def test_options_from_the_environment_override_the_config() -> None:
    opts, names = with_env(
        options_from_config(_cm(registryPullSecret="a")),
        {env_name("registry_pull_secret"): "b", env_name("wave_release"): "engine"},
    )
    assert opts.registry_pull_secret == "b" and opts.wave_release == "engine"
    assert names == ["registryPullSecret", "waveRelease"]
    # a password never becomes an option, not even from the environment
    same, none = with_env(opts, {"WORKLOADRUN_FN_REGISTRY_PASSWORD": PASSWORD})
    assert none == [] and same == opts


def _preview_with_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    cfg = tmp_path / "render.yaml"
    cfg.write_text(
        yaml.safe_dump(
            _cm(
                registry="nvcr.io",
                registryUsername="$oauthtoken",
                registryPasswordEnv="NGC_API_KEY",
            )
        )
    )
    monkeypatch.setenv("NGC_API_KEY", PASSWORD)
    code, out, err = preview(
        [str(REPO / "fixtures" / "workloadrun-basic-mpi.yaml"), str(REPO / "fixtures" / "nodes-16.yaml")],
        str(cfg), None, None, "yaml",
    )  # fmt: skip
    assert PASSWORD not in "\n".join(err)
    return code, out


def test_the_render_preview_may_show_the_plain_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WORKLOADRUN_FN_GITOPS", raising=False)
    code, out = _preview_with_password(tmp_path, monkeypatch)
    assert code == 0 and "kind: Secret" in out


def test_the_preview_on_a_gitops_path_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKLOADRUN_FN_GITOPS", "1")
    code, out = _preview_with_password(tmp_path, monkeypatch)
    assert code == 1 and out == ""
