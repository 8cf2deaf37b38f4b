"""The Argo CD path: the CMP plugin's exact commands with only the image's tools, the shipped
manifests, and the TrainJob health check run by a real Lua 5.1 interpreter."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.gitops.discover import find
from tests.e2e.helpers import need
from tests.gitops.image_env import DEBIAN_BASE_TOOLS, REPO, clean_env, is_empty, tool_dir
from tests.k8s_schemas import validate_all

ARGO = REPO / "deploy" / "argocd"
EXAMPLES = REPO / "kustomization-examples"
PLUGIN = yaml.safe_load((ARGO / "plugin.yaml").read_text())
LUA = (ARGO / "trainjob-health.lua").read_text()
RECORDED = Path(__file__).parent / "recorded"
PASSWORD = "argocd-test-password-0451"


def _copy(name: str, tmp: Path) -> Path:
    dst = tmp / "repo"
    shutil.copytree(EXAMPLES, dst)
    return dst / name


def _plugin(section: str, cwd: Path, tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    spec = PLUGIN["spec"][section]
    cmd = spec["find"]["command"] if section == "discover" else [*spec["command"], *spec["args"]]
    bin_dir = tool_dir(tmp / "bin", DEBIAN_BASE_TOOLS, kustomize=True)
    argo = {
        "ARGOCD_APP_NAME": "gpu",
        "ARGOCD_APP_NAMESPACE": "argocd",
        "ARGOCD_APP_REVISION": "0123456789abcdef",
        "ARGOCD_APP_SOURCE_PATH": str(cwd.name),
        "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example.com/gpu.git",
        "NGC_API_KEY": PASSWORD,  # even if the sidecar had it, no output may show it
        **env,
    }
    return subprocess.run(
        cmd, cwd=cwd, env=clean_env(bin_dir, tmp / "tmp", **argo),
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "tmp").mkdir()
    (tmp_path / "bin").mkdir()
    return tmp_path


def _docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


@pytest.mark.parametrize(
    "app",
    ["argocd-app", "basic-mpi", "overlay-per-environment/overlays/prod"],
    ids=["plain-directory", "kustomization", "overlay-whose-workloadrun-is-in-a-base"],
)
def test_discover_and_generate_with_only_the_images_tools(app: str, tmp: Path) -> None:
    cwd = _copy(app, tmp)
    found = _plugin("discover", cwd, tmp)
    assert found.returncode == 0 and found.stdout.strip(), found.stderr
    proc = _plugin("generate", cwd, tmp)
    assert proc.returncode == 0, proc.stderr
    docs = _docs(proc.stdout)
    jobs = [d for d in docs if d["kind"] == "TrainJob"]
    assert jobs and not {"WorkloadRun", "Node", "List", "WorkloadRunRender"} & {
        d["kind"] for d in docs
    }
    assert validate_all(docs) == []
    # Argo CD releases the waves: nothing suspended, each wave its own sync wave after deps
    assert all("suspend" not in j["spec"] for j in jobs)
    for d in docs:
        wave = d["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
        expected = (
            int(d["metadata"]["labels"]["nvcre.nvidia.com/wave"]) + 1
            if d["kind"] == "TrainJob"
            else 0
        )
        assert int(wave) == expected
    assert PASSWORD not in proc.stdout + proc.stderr
    assert is_empty(tmp / "tmp"), "generate left temp files behind"


def test_hidden_files_are_never_read(tmp: Path) -> None:
    cwd = _copy("argocd-app", tmp)
    (cwd / ".argocd-source.yaml").write_text("helm: {parameters: [{name: x}]}\n: : not yaml\n")
    (cwd / ".workloadrun.yaml").write_text((cwd / "workloadrun.yaml").read_text())
    (cwd / "notes.txt").write_text("kind: WorkloadRun\n")
    proc = _plugin("generate", cwd, tmp)
    assert proc.returncode == 0, proc.stderr
    assert sum(d["kind"] == "TrainingRuntime" for d in _docs(proc.stdout)) == 1


def test_argocd_env_options_reach_the_function(tmp: Path) -> None:
    cwd = _copy("overlay-per-environment/overlays/dev", tmp)
    proc = _plugin("generate", cwd, tmp, ARGOCD_ENV_REGISTRY_PULL_SECRET="team-pull")
    assert proc.returncode == 0, proc.stderr
    for j in (d for d in _docs(proc.stdout) if d["kind"] == "TrainingRuntime"):
        text = json.dumps(j)
        assert '"imagePullSecrets": [{"name": "team-pull"}]' in text


def test_an_unknown_argocd_env_option_is_refused_with_the_allowed_list(tmp: Path) -> None:
    cwd = _copy("argocd-app", tmp)
    proc = _plugin("generate", cwd, tmp, ARGOCD_ENV_REGISTRY_PULL_SECRTE="x")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "ARGOCD_ENV_REGISTRY_PULL_SECRTE is not an option" in proc.stderr
    assert "REGISTRY_PULL_SECRET" in proc.stderr


def test_a_password_option_cannot_come_through_argocd_env(tmp: Path) -> None:
    cwd = _copy("argocd-app", tmp)
    proc = _plugin("generate", cwd, tmp, ARGOCD_ENV_REGISTRY_PASSWORD_ENV="NGC_API_KEY")
    assert proc.returncode == 1 and proc.stdout == ""
    assert PASSWORD not in proc.stderr


def test_a_plain_secret_in_the_repo_config_is_refused_in_the_plugin(tmp: Path) -> None:
    cwd = _copy("argocd-app", tmp)
    (cwd / "render.yaml").write_text(
        "apiVersion: fn.nvcre.nvidia.com/v1alpha1\nkind: WorkloadRunRender\n"
        "metadata: {name: render}\nspec: {registry: nvcr.io, registryUsername: $oauthtoken,"
        " registryPasswordEnv: NGC_API_KEY}\n"
    )
    proc = _plugin("generate", cwd, tmp)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "plainPullSecret" in proc.stderr and PASSWORD not in proc.stderr
    assert is_empty(tmp / "tmp")


def test_a_failed_render_hands_argo_nothing_and_cleans_up(tmp: Path) -> None:
    cwd = _copy("basic-mpi", tmp)
    wr = cwd / "workloadrun.yaml"
    wr.write_text(wr.read_text().replace("numNodes: 4", "numNodes: 40"))
    proc = _plugin("generate", cwd, tmp)
    assert proc.returncode != 0 and proc.stdout == ""
    assert "need 40 (numNodes)" in proc.stderr
    assert is_empty(tmp / "tmp")


def test_discovery_ignores_directories_without_a_workloadrun(tmp_path: Path) -> None:
    d = tmp_path / "app"
    d.mkdir()
    (d / "deploy.yaml").write_text("kind: Deployment\n")
    (d / ".hidden.yaml").write_text("kind: WorkloadRun\n")
    (d / "kustomization.yaml").write_text("resources: [../elsewhere, https://x/y.yaml]\n")
    assert find(d) is None
    base = tmp_path / "base"
    shutil.copytree(EXAMPLES / "overlay-per-environment" / "base", base)
    overlay = tmp_path / "overlays" / "only-a-patch"
    overlay.mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(
        "resources: [../../base]\npatches: [{path: patch.yaml}]\n"
    )
    (overlay / "patch.yaml").write_text("kind: Deployment\n")
    assert find(overlay) == (base / "workloadrun.yaml").resolve()


def test_the_shipped_component_holds_every_object_the_manifests_reference(tmp_path: Path) -> None:
    """Built into a stand-in of Argo CD's install: the ConfigMap the sidecar mounts exists, the
    health check lands in argocd-cm, and no Secret is referenced."""
    kubectl = need("kubectl")
    root = tmp_path / "argocd"
    shutil.copytree(ARGO, root / "workloadrun-fn")
    (root / "install").mkdir()
    (root / "install" / "argocd.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: argocd-repo-server}\n"
        "spec:\n  selector: {matchLabels: {a: r}}\n  template:\n    metadata: {labels: {a: r}}\n"
        "    spec:\n      containers: [{name: argocd-repo-server, image: argocd}]\n"
        "      volumes: [{name: var-files, emptyDir: {}}, {name: plugins, emptyDir: {}}]\n"
    )
    (root / "install" / "kustomization.yaml").write_text(
        "namespace: argocd\nresources: [argocd.yaml]\ncomponents: [../workloadrun-fn]\n"
    )
    proc = subprocess.run(
        [kubectl, "kustomize", str(root / "install")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    objs = {(d["kind"], d["metadata"]["name"]): d for d in _docs(proc.stdout)}
    cm = objs[("ConfigMap", "workloadrun-fn-cmp-plugin")]
    assert yaml.safe_load(cm["data"]["plugin.yaml"]) == PLUGIN
    health = objs[("ConfigMap", "argocd-cm")]["data"]
    assert health["resource.customizations.health.trainer.kubeflow.org_TrainJob"] == LUA
    pod = objs[("Deployment", "argocd-repo-server")]["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    for c in pod["containers"]:
        for m in c.get("volumeMounts", []):
            assert m["name"] in volumes
    referenced = {v["configMap"]["name"] for v in volumes.values() if "configMap" in v}
    assert referenced <= {name for kind, name in objs if kind == "ConfigMap"}
    assert "secretKeyRef" not in proc.stdout and "secretName" not in proc.stdout


# --- the health check, run by Lua 5.1 (what Argo CD's gopher-lua implements) --------------------


def _health(obj: dict[str, Any]) -> dict[str, str]:
    lua51 = pytest.importorskip("lupa.lua51")
    lua = lua51.LuaRuntime(unpack_returned_tuples=True)
    assert lua.eval("_VERSION") == "Lua 5.1"
    lua.globals().obj = lua.table_from(obj, recursive=True)
    out = lua.execute(LUA)
    return {"status": out["status"], "message": out["message"]}


def _recorded(scenario: str, step: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(
        (RECORDED / scenario / f"{step:02d}.json").read_text()
    )["items"]
    return items


@pytest.mark.parametrize(
    ("scenario", "step", "index", "status"),
    [
        ("all-waves-complete", 0, 0, "Progressing"),
        ("all-waves-complete", 0, 1, "Suspended"),
        ("all-waves-complete", 1, 0, "Healthy"),
        ("wave-1-fails", 2, 1, "Degraded"),
    ],
    ids=["running-is-progressing", "suspended-by-kueue-or-hand", "complete-is-healthy",
         "failed-is-degraded"],
)  # fmt: skip
def test_health_of_recorded_trainjobs(scenario: str, step: int, index: int, status: str) -> None:
    assert _health(_recorded(scenario, step)[index])["status"] == status


def test_a_just_applied_trainjob_without_status_is_progressing() -> None:
    assert _health({"spec": {}})["status"] == "Progressing"


def _argocd_sync(objs: list[dict[str, Any]], timeline: list[list[dict[str, Any]]]) -> list[int]:
    """Argo CD's documented wave rule, driven by the Lua health: apply the first wave where any
    resource is out of sync or unhealthy; repeat. (argo-cd.readthedocs.io, user-guide/sync-waves:
    "It then determines the number of the next wave to apply. This is the first number where any
    resource is out-of-sync or unhealthy.") ``timeline[i]`` is the cluster's TrainJobs (with
    status) after the i-th look. Returns the wave applied at each look (-1: none)."""
    applied: set[str] = set()
    waves_applied = []
    for cluster in timeline:
        live = {j["metadata"]["name"]: j for j in cluster}
        by_wave: dict[int, list[dict[str, Any]]] = {}
        for o in objs:
            by_wave.setdefault(
                int(o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]), []
            ).append(o)
        chosen = -1
        for w in sorted(by_wave):
            names = [o["metadata"]["name"] for o in by_wave[w]]
            synced = all(n in applied for n in names)
            healthy = all(
                o["kind"] != "TrainJob"
                or (
                    o["metadata"]["name"] in live
                    and _health(live[o["metadata"]["name"]])["status"] == "Healthy"
                )
                for o in by_wave[w]
            )
            if not synced or not healthy:
                chosen = w
                applied.update(names)
                break
        waves_applied.append(chosen)
    return waves_applied


def test_argocd_applies_wave_n_plus_1_only_after_wave_n_completed(tmp: Path) -> None:
    """The plugin's output for the 4-wave golden run, synced over the recorded states."""
    case = REPO / "tests" / "golden" / "repeat-count-and-max-concurrent-make-suspended-waves"
    rl = yaml.safe_load((case / "input.yaml").read_text())
    app = tmp / "app"
    app.mkdir()
    (app / "input.yaml").write_text(yaml.safe_dump_all(rl["items"]))
    proc = _plugin("generate", app, tmp)
    assert proc.returncode == 0, proc.stderr
    objs = _docs(proc.stdout)
    steps = sorted((RECORDED / "all-waves-complete").glob("*.json"))
    timeline = [json.loads(s.read_text())["items"] for s in steps]
    # a TrainJob the engine has not applied yet is not in the cluster
    seen = _argocd_sync(objs, [[], *timeline])
    # look 0 applies the dependencies (wave 0) ... each TrainJob wave only once the previous
    # recorded state shows the wave before it Complete
    assert seen[0] == 0
    assert sorted({w for w in seen if w >= 0}) == [0, 1, 2, 3, 4]
    applied_at = {w: seen.index(w) for w in range(1, 5) if w in seen}
    for w in range(2, 5):
        look = applied_at[w]
        before = {j["metadata"]["name"]: j for j in [[], *timeline][look]}
        prev = [o for o in objs if o["kind"] == "TrainJob"
                and o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == str(w - 1)]  # fmt: skip
        assert all(_health(before[o["metadata"]["name"]])["status"] == "Healthy" for o in prev)


def test_a_run_flag_reaches_the_function_through_argocd_env(tmp: Path) -> None:
    """The accepted names are the function's options, not a list kept in plugin.yaml."""
    cwd = _copy("argocd-app", tmp)
    plain = _plugin("generate", cwd, tmp)
    proc = _plugin("generate", cwd, tmp, ARGOCD_ENV_TEST_SCALE="intra-node")
    assert plain.returncode == 0 and proc.returncode == 0, proc.stderr
    assert proc.stdout != plain.stdout
    assert "run:testScale=intra-node" in proc.stdout


@pytest.mark.parametrize(
    ("variable", "why"),
    [
        pytest.param("ARGOCD_ENV_WAVE_RELEASE", "sync waves", id="wave-release-is-the-plugins"),
        pytest.param("ARGOCD_ENV_OUTPUT_DIR", "writes no files", id="output-dir-writes-no-files"),
        pytest.param("ARGOCD_ENV_PLAIN_PULL_SECRET", "no password", id="no-plain-secret"),
    ],
)
def test_an_option_argocd_must_not_set_is_refused_with_the_reason(
    tmp: Path, variable: str, why: str
) -> None:
    cwd = _copy("argocd-app", tmp)
    proc = _plugin("generate", cwd, tmp, **{variable: "x"})
    assert proc.returncode == 1 and proc.stdout == ""
    assert f"{variable} is not an option of this plugin" in proc.stderr and why in proc.stderr


def test_the_docs_name_every_option_the_plugin_refuses() -> None:
    from krm_fn.api.config import FunctionOptions
    from krm_fn.gitops.env_options import NOT_FROM_ARGOCD

    text = (Path(__file__).parents[2] / "docs" / "gitops.md").read_text()
    for field in NOT_FROM_ARGOCD:
        assert f"`{FunctionOptions.model_fields[field].alias or field}`" in text, field
