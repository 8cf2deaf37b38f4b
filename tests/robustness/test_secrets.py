"""The registry password appears only inside the pull Secret's ``.dockerconfigjson``.

Every golden case is run through the console script with its ``env.yaml``, a registry config
and a distinctive password; stdout (with the Secret's ``data`` removed), stderr and every
result are searched for the password, its base64 forms (at each of the three byte
alignments) and the base64 of ``user:password``.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.entry.run import run_krm
from tests.e2e.helpers import copy_example, need, run
from tests.golden.make_inputs import HERE as GOLDEN
from tests.robustness.helpers import (
    REGISTRY,
    Proc,
    assert_clean_refusal,
    dump,
    load,
    load_all,
    mpi_run,
    nodes,
    rl,
    run_fn,
    wr,
)

PASSWORD = "Zq9+distinct/registry=pw-4f1c"
USERNAME = "$oauthtoken"
PASSWORD_ENV = "NGC_API_KEY"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").exists())


def secret_forms(secret: str, user: str = USERNAME) -> set[str]:
    """The secret, and every base64 text that would betray it wherever it sits in a stream."""
    forms = {secret}
    for plain in (secret.encode(), f"{user}:{secret}".encode()):
        for enc in (base64.b64encode, base64.urlsafe_b64encode):
            forms.add(enc(plain).decode().rstrip("="))
            # the characters fixed by the secret alone, for each alignment inside longer data
            for shift in (1, 2):
                text = enc(b"\0" * shift + plain).decode()
                start = math.ceil(shift / 3) * 4
                end = ((shift + len(plain)) // 3) * 4
                forms.add(text[start:end])
    assert all(len(f) >= 20 for f in forms)
    return forms


FORMS = secret_forms(PASSWORD)


def _leaks(text: str) -> list[str]:
    return sorted(f for f in FORMS if f in text)


def _with_registry(case: Path) -> tuple[bytes, dict[str, str]]:
    """The case's input with the registry options added (a plain stream becomes a ResourceList
    so it can carry them), and its environment with the distinctive password."""
    docs = [d for d in yaml.safe_load_all((case / "input.yaml").read_text()) if d]
    single_rl = len(docs) == 1 and docs[0].get("kind") == "ResourceList"
    doc = docs[0] if single_rl else rl(docs)
    registry = copy.deepcopy(REGISTRY["data"])
    fc = doc.get("functionConfig")
    if fc is None:
        doc["functionConfig"] = copy.deepcopy(REGISTRY)
    elif fc.get("kind") == "ConfigMap":
        fc.setdefault("data", {}).update(registry)
    else:
        fc.setdefault("spec", {}).update(registry)
    env_file = case / "env.yaml"
    env = (
        {k: str(v) for k, v in (yaml.safe_load(env_file.read_text()) or {}).items()}
        if (env_file.exists())
        else {}
    )
    env[PASSWORD_ENV] = PASSWORD
    return dump(doc), env


def _without_secret_data(stdout: str) -> tuple[str, list[dict[str, Any]]]:
    """stdout with every Secret's data removed (re-serialised), and the Secrets found."""
    docs = [d for d in load_all(stdout) if d]
    secrets: list[dict[str, Any]] = []

    def strip(items: list[Any]) -> None:
        for it in items:
            if isinstance(it, dict) and it.get("kind") == "Secret":
                secrets.append(copy.deepcopy(it))
                it.pop("data", None)

    for d in docs:
        strip(d["items"] if d.get("kind") == "ResourceList" else [d])
    return yaml.safe_dump_all(docs, allow_unicode=True), secrets


@contextlib.contextmanager
def _environ(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="module")
def golden_runs() -> dict[str, Proc]:
    """Each case in-process (``run_krm``, what the console script calls), as a :class:`Proc`."""
    out: dict[str, Proc] = {}
    for name in CASES:
        data, env = _with_registry(GOLDEN / name)
        with _environ(env):
            o = run_krm(data, cwd=GOLDEN / name)
        out[name] = Proc(o.exit_code, o.stdout, "".join(f"{x}\n" for x in o.stderr), 0.0, 0)
    return out


@pytest.mark.parametrize("case", CASES)
def test_password_never_leaks_from_a_golden_case(case: str, golden_runs: dict[str, Proc]) -> None:
    proc = golden_runs[case]
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    assert _leaks(proc.stderr) == []
    rest, secrets = _without_secret_data(proc.stdout)
    assert _leaks(rest) == [], "password outside the Secret's .dockerconfigjson"
    results = (load(proc.stdout) or {}).get("results", []) if proc.stdout else []
    for r in results:
        assert _leaks(json.dumps(r)) == []
    if proc.returncode == 0:
        assert len(secrets) >= 1, "a registry config must yield a pull Secret"
    for s in secrets:
        assert set(s["data"]) == {".dockerconfigjson"}
        cfg = json.loads(base64.b64decode(s["data"][".dockerconfigjson"]))
        (auth,) = cfg["auths"].values()
        assert auth["password"] == PASSWORD
        assert base64.b64decode(auth["auth"]).decode() == f"{USERNAME}:{PASSWORD}"
        assert _leaks(json.dumps({k: v for k, v in s.items() if k != "data"})) == []


def test_the_search_would_find_a_leak() -> None:
    assert _leaks(f"x{PASSWORD}y")
    blob = base64.b64encode(f'{{"p":"{PASSWORD}"}}'.encode()).decode()
    assert _leaks(blob)
    assert _leaks(base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode())


def test_preview_prints_the_password_only_inside_the_secret(tmp_path: Path) -> None:
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all([mpi_run(), *nodes(2)]))
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(REGISTRY))
    proc = run_fn(
        b"", "render", str(tmp_path / "in.yaml"), "--config", str(cfg), env={PASSWORD_ENV: PASSWORD}
    )
    assert proc.returncode == 0, proc.stderr
    rest, secrets = _without_secret_data(proc.stdout)
    assert len(secrets) == 1
    assert _leaks(rest) == [] and _leaks(proc.stderr) == []


# --- a plain registryPassword is refused, and the refusal does not repeat it ----------------------

PLAIN_PASSWORD_CONFIGS = {
    "configmap-registry-password-refused": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "fn"},
        "data": {**REGISTRY["data"], "registryPassword": PASSWORD},
    },
    "configmap-registry-password-alone-refused": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "fn"},
        "data": {"registryPassword": PASSWORD},
    },
    "workloadrunrender-registry-password-refused": {
        "apiVersion": "fn.nvcre.nvidia.com/v1alpha1",
        "kind": "WorkloadRunRender",
        "metadata": {"name": "fn"},
        "spec": {"registry": "nvcr.io", "registryUsername": USERNAME, "registryPassword": PASSWORD},
    },
    "workloadrunrender-registry-password-of-wrong-type-refused": {
        "apiVersion": "fn.nvcre.nvidia.com/v1alpha1",
        "kind": "WorkloadRunRender",
        "metadata": {"name": "fn"},
        "spec": {"registryPassword": [PASSWORD]},
    },
}


@pytest.mark.parametrize("case", list(PLAIN_PASSWORD_CONFIGS))
def test_plain_registry_password_option_is_refused_without_echoing_it(case: str) -> None:
    data = dump(rl([mpi_run(), *nodes(2)], PLAIN_PASSWORD_CONFIGS[case]))
    proc = run_fn(data, env={PASSWORD_ENV: "unrelated"})
    assert_clean_refusal(proc, data, "registryPassword", "registryPasswordEnv")
    assert _leaks(proc.stderr) == [] and _leaks(proc.stdout) == []


def test_generator_mode_password_annotation_is_refused_without_echoing_it() -> None:
    run = mpi_run("gen")
    run["metadata"]["annotations"]["fn.nvcre.nvidia.com/registryPassword"] = PASSWORD
    data = dump(rl([*nodes(2)], run))
    proc = run_fn(data)
    assert_clean_refusal(proc, data, "registryPassword is refused", "registryPasswordEnv")
    assert _leaks(proc.stderr) == [] and _leaks(proc.stdout) == []


def test_unset_password_variable_is_named_and_nothing_rendered() -> None:
    data = dump(rl([mpi_run(), *nodes(2)], REGISTRY))
    proc = run_fn(data, env={PASSWORD_ENV: ""})
    assert_clean_refusal(
        proc, data, "environment variable NGC_API_KEY (named by the registryPasswordEnv option)"
    )


# --- kpt: nothing but the generated Secret holds the password -----------------------------------


@pytest.mark.e2e
def test_kpt_render_of_the_example_writes_no_password_anywhere(tmp_path: Path) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)], NGC_API_KEY=PASSWORD)
    assert proc.returncode == 0, proc.stderr
    assert _leaks(proc.stdout + proc.stderr) == []
    for f in sorted(pkg.rglob("*")):
        if f.is_file():
            assert _leaks(f.read_text()) == [], f
    generated = (pkg / "generated" / "my-workload.yaml").read_text()
    assert "kind: ExternalSecret" in generated and "kind: Secret\n" not in generated


def _with_password_env(pkg: Path, opt_in: bool) -> None:
    cfg = pkg / "fn-config.yaml"
    text = cfg.read_text()
    start = text.index("  # kpt writes")
    extra = '  plainPullSecret: "true"\n' if opt_in else ""
    cfg.write_text(text[:start] + "  registryPasswordEnv: NGC_API_KEY\n" + extra)


@pytest.mark.e2e
def test_kpt_refuses_to_write_the_password_into_the_package_without_opt_in(
    tmp_path: Path,
) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    _with_password_env(pkg, opt_in=False)
    before = {f: f.read_bytes() for f in pkg.rglob("*") if f.is_file()}
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)], NGC_API_KEY=PASSWORD)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "which kpt writes into the package files" in out and "plainPullSecret" in out
    assert _leaks(out) == []
    assert {f: f.read_bytes() for f in pkg.rglob("*") if f.is_file()} == before


@pytest.mark.e2e
def test_kpt_render_with_opt_in_writes_the_password_only_into_the_secret(tmp_path: Path) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    _with_password_env(pkg, opt_in=True)
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)], NGC_API_KEY=PASSWORD)
    assert proc.returncode == 0, proc.stderr
    assert _leaks(proc.stdout + proc.stderr) == []
    found_secret = False
    for f in sorted(pkg.rglob("*")):
        if not f.is_file():
            continue
        if f.suffix not in (".yaml", ".yml"):  # .krmignore
            assert _leaks(f.read_text()) == [], f
            continue
        rest, secrets = _without_secret_data(f.read_text())
        found_secret = found_secret or bool(secrets)
        assert _leaks(rest) == [], f
    assert found_secret


def test_each_run_gets_its_own_pull_secret_and_nothing_else_holds_the_password() -> None:
    data = dump(rl([wr("a", mpi_run()["spec"]), wr("b", mpi_run()["spec"]), *nodes(2)], REGISTRY))
    proc = run_fn(data, env={PASSWORD_ENV: PASSWORD})
    assert proc.returncode == 0, proc.stderr
    rest, secrets = _without_secret_data(proc.stdout)
    assert sorted(s["metadata"]["name"] for s in secrets) == ["a-pull-secret", "b-pull-secret"]
    assert _leaks(rest) == []
