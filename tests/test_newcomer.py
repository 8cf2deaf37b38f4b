"""A newcomer's mistakes each get a hint; help, version, completion and the empty-input cases.

Every test runs the installed console script (as a user would), in a subprocess; the terminal
cases give the script a real pseudo-terminal as stdin.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn import __version__
from krm_fn.entry.cli import SUBCOMMANDS
from krm_fn.platforms.detect import PLATFORMS
from krm_fn.platforms.gpu import GPU_ARCHITECTURES
from tests.builders import rl as resource_list

REPO = Path(__file__).resolve().parents[1]
FN = str(Path(sys.executable).with_name("workloadrun-fn"))
ENV = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "NGC_API_KEY": "newcomer-key-1"}
WR = REPO / "fixtures" / "workloadrun-basic-mpi.yaml"
NODES = REPO / "fixtures" / "nodes-16.yaml"


def run(
    args: list[str],
    stdin: bytes = b"",
    cwd: Path = REPO,
    env: dict[str, str] | None = None,
    columns: int = 80,
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [FN, *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env={**ENV, "COLUMNS": str(columns), **(env or {})},
        timeout=120,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def run_on_terminal(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run with a pseudo-terminal as stdin (an interactive shell); must not wait for input."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [FN, *args], stdin=follower, capture_output=True, cwd=REPO, env=ENV, timeout=60
        )
    finally:
        os.close(follower)
        os.close(leader)
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


# --- help, version, completion ----------------------------------------------------------------


def test_help_lists_forms_examples_exit_codes_debug_and_completion() -> None:
    proc = run(["--help"])
    assert proc.returncode == 0
    out = proc.stdout
    assert "workloadrun-fn PLUGIN_CONFIG" in out and "fn.nvcre.nvidia.com/inventory" in out
    assert "Examples:" in out and "workloadrun-fn render fixtures/" in out
    for code in ("0", "1", "2", "70"):
        assert re.search(rf"^\s+{code}\s+\S", out, re.M), f"exit code {code} not explained"
    assert "WORKLOADRUN_FN_DEBUG=1" in out
    for shell in ("bash_source", "zsh_source", "fish_source"):
        assert f"_WORKLOADRUN_FN_COMPLETE={shell} workloadrun-fn" in out
    assert "docs/workloadrun-reference.md" in out


@pytest.mark.parametrize("columns", [60, 200], ids=["narrow-60", "wide-200"])
def test_help_shows_every_command_summary_whole(columns: int) -> None:
    from krm_fn.entry.commands import cli

    out = re.sub(r"\s+", " ", run(["--help"], columns=columns).stdout)
    assert (
        "inventory Compact `kubectl get nodes -o yaml|json` (FILE... or - / nothing for stdin)."
        in out
    )
    for name, cmd in ((n, c) for n, c in cli.commands.items() if not c.hidden):
        summary = " ".join(cmd.get_short_help_str(limit=10_000).split())
        assert f"{name} {summary}" in out, f"summary of {name} cut"


def test_render_help_lists_the_valid_platform_and_gpu_names_and_examples() -> None:
    out = re.sub(r"\s+", " ", run(["render", "--help"]).stdout)
    assert "--platform NAME" in out and "--platform TEXT" not in out
    assert "One of: " + ", ".join(PLATFORMS) in out
    assert "One of: " + ", ".join(GPU_ARCHITECTURES) in out
    assert "Examples:" in out and "--platform aws --gpu-arch h100" in out
    assert "Exit codes:" in out


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flags(flag: str) -> None:
    proc = run([flag])
    assert proc.returncode == 0 and proc.stdout.strip() == f"workloadrun-fn, version {__version__}"


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash_source", "complete -o nosort -F _workloadrun_fn_completion workloadrun-fn"),
        ("zsh_source", "#compdef workloadrun-fn"),
        ("fish_source", "complete --no-files --command workloadrun-fn"),
    ],
    ids=["bash-script", "zsh-script", "fish-script"],
)
def test_completion_script_for_each_shell(shell: str, marker: str) -> None:
    proc = run([], env={"_WORKLOADRUN_FN_COMPLETE": shell})
    assert proc.returncode == 0, proc.stderr
    assert marker in proc.stdout


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [
        ("workloadrun-fn re", 1, {"release", "render", "report"}),
        ("workloadrun-fn render --platform a", 3, {"aws", "azure"}),
        ("workloadrun-fn render --gpu-arch gb", 3, {"gb200", "gb300"}),
        ("workloadrun-fn render --o", 2, {"--output"}),
    ],
    ids=["commands", "platform-names", "gpu-names", "options"],
)
def test_bash_completion_offers(words: str, cword: int, expected: set[str]) -> None:
    proc = run(
        [],
        env={
            "_WORKLOADRUN_FN_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(cword),
        },
    )
    assert proc.returncode == 0, proc.stderr
    offered = {line.split(",", 1)[1] for line in proc.stdout.splitlines()}
    assert offered == expected


def test_readme_documents_completion() -> None:
    readme = (REPO / "README.md").read_text()
    for shell in ("bash_source", "zsh_source", "fish_source"):
        assert f"_WORKLOADRUN_FN_COMPLETE={shell}" in readme


# --- no input ------------------------------------------------------------------------------


def test_bare_command_on_a_terminal_prints_usage_instead_of_waiting() -> None:
    proc = run_on_terminal([])
    assert proc.returncode == 2
    assert "stdin is a terminal" in proc.stderr and "usage: workloadrun-fn" in proc.stderr
    assert "workloadrun-fn render FILE" in proc.stderr
    for name in SUBCOMMANDS:
        assert name in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("stdin", [b"", b"\n  \n"], ids=["empty", "blank-lines"])
def test_empty_stdin_is_a_usage_error_not_a_silent_success(stdin: bytes) -> None:
    proc = run([], stdin)
    assert proc.returncode == 2
    assert "stdin is empty" in proc.stderr and "usage: workloadrun-fn" in proc.stderr
    assert proc.stdout == ""


# --- the mistakes of issue 18, each with its hint ------------------------------------------


def test_forgetting_render_on_a_terminal_says_to_use_render() -> None:
    proc = run_on_terminal([str(WR.relative_to(REPO))])
    assert proc.returncode == 2
    assert "kustomize's exec-plugin form" in proc.stderr
    assert f"workloadrun-fn render {WR.relative_to(REPO)}" in proc.stderr


def test_forgetting_render_in_a_pipe_points_to_render_and_the_inventory_annotation() -> None:
    proc = run([str(WR.relative_to(REPO))])
    assert proc.returncode == 1
    assert "0 Node(s)" not in proc.stderr
    assert "fn.nvcre.nvidia.com/inventory" in proc.stderr
    assert f"workloadrun-fn render {WR.relative_to(REPO)} NODE_FILES" in proc.stderr


def test_generator_mode_without_the_inventory_annotation_names_the_annotation(
    tmp_path: Path,
) -> None:
    cfg = tmp_path / "workloadrun.yaml"
    cfg.write_bytes(WR.read_bytes())
    proc = run([str(cfg)], b"", cwd=tmp_path)
    assert proc.returncode == 1
    assert (
        "metadata.annotations[fn.nvcre.nvidia.com/inventory]: no Node to render on" in proc.stderr
    )
    assert "fn.nvcre.nvidia.com/inventory: nodes.yaml" in proc.stderr
    assert proc.stdout == ""


def test_generator_mode_with_the_annotation_still_renders(tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_bytes(NODES.read_bytes())
    wr = yaml.safe_load(WR.read_text())
    wr["metadata"]["annotations"] = {"fn.nvcre.nvidia.com/inventory": "nodes.yaml"}
    (tmp_path / "wr.yaml").write_text(yaml.safe_dump(wr))
    proc = run(["wr.yaml"], b"", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("kind: TrainJob") == 4


def test_a_node_file_alone_says_it_is_an_inventory_and_how_to_preview() -> None:
    rel = str(NODES.relative_to(REPO))
    proc = run([rel])
    assert proc.returncode == 1
    assert f"{rel} holds List objects" in proc.stderr
    assert f"workloadrun-fn render WORKLOADRUN_FILE {rel}" in proc.stderr
    assert "fn.nvcre.nvidia.com/inventory" in proc.stderr


def test_a_node_file_alone_on_a_terminal_does_not_wait() -> None:
    proc = run_on_terminal([str(NODES.relative_to(REPO))])
    assert proc.returncode == 2
    assert "workloadrun-fn render" in proc.stderr


@pytest.mark.parametrize(
    "args", [["render", "nope.yaml"], ["render", "fixtures/", "nope.yaml"]], ids=["alone", "among"]
)
def test_render_of_a_missing_file_exits_2_naming_it(args: list[str]) -> None:
    proc = run(args)
    assert proc.returncode == 2
    assert "nope.yaml" in proc.stderr and "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def _with_config(data: dict[str, str]) -> bytes:
    rl = yaml.safe_load((REPO / "fixtures" / "krm" / "resourcelist.yaml").read_text())
    rl["functionConfig"] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "f"}}
    rl["functionConfig"]["data"] = data
    return yaml.safe_dump(rl).encode()


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("registy", "registry"), ("Platform", "platform"), ("outputdir", "outputDir")],
    ids=["registy-means-registry", "wrong-case", "outputdir-means-outputDir"],
)
def test_unknown_option_gets_did_you_mean(typo: str, meant: str) -> None:
    proc = run([], _with_config({typo: "x"}))
    assert proc.returncode == 1
    assert f"data.{typo}: unknown option (did you mean {meant}?)" in proc.stderr


def test_unknown_option_never_offers_the_refused_registry_password() -> None:
    proc = run([], _with_config({"registrypassword": "hunter2"}))
    assert proc.returncode == 1
    assert "allowed options:" in proc.stderr
    assert not re.search(r"registryPassword(?!Env)", proc.stderr), proc.stderr
    assert "hunter2" not in proc.stderr + proc.stdout


def test_unknown_cli_command_gets_did_you_mean() -> None:
    proc = run(["rendr", "x.yaml"])
    assert proc.returncode == 2
    assert "Did you mean 'render'?" in proc.stderr


def _two_runs_one_failing() -> bytes:
    good = yaml.safe_load(WR.read_text())
    bad = yaml.safe_load(WR.read_text())
    bad["metadata"]["name"] = "too-big"
    bad["spec"]["numNodes"] = 40
    items = [good, bad, *yaml.safe_load(NODES.read_text())["items"]]
    return yaml.safe_dump(resource_list(items)).encode()


def test_failed_run_reports_no_rendered_trainjobs_above_nothing_rendered() -> None:
    proc = run([], _two_runs_one_failing())
    assert proc.returncode == 1
    assert "nothing rendered" in proc.stderr
    results = yaml.safe_load(proc.stdout)["results"]
    assert any("need 40 (numNodes)" in r["message"] for r in results)
    assert not [r for r in results if "TrainJob(s)" in r["message"]], results


@pytest.mark.e2e
def test_failed_kpt_run_prints_no_rendered_note(tmp_path: Path) -> None:
    from tests.e2e.helpers import need

    kpt = need("kpt")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    docs = yaml.safe_load(_two_runs_one_failing())["items"]
    (pkg / "input.yaml").write_text(yaml.safe_dump_all(docs))
    proc = subprocess.run(
        [kpt, "fn", "eval", str(pkg), "--exec", FN, "--truncate-output=false"],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        timeout=300,
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "need 40 (numNodes)" in out
    assert "rendered 4 TrainJob(s)" not in out


def _short_node_inventory(short: int) -> list[dict[str, object]]:
    nodes: list[dict[str, object]] = yaml.safe_load(NODES.read_text())["items"][:5]
    for node in nodes[:short]:
        status = node["status"]
        assert isinstance(status, dict)
        status["allocatable"]["nvidia.com/gpu"] = "4"
    return nodes


@pytest.mark.parametrize(
    ("short", "advice"),
    [
        (0, "set numNodes to 5 or fewer"),
        (1, "set numNodes to 4 or fewer"),
        (5, None),
    ],
    ids=["all-usable", "one-flagged-not-counted", "none-usable-no-numnodes-advice"],
)
def test_numnodes_advice_does_not_count_nodes_flagged_as_unable(
    short: int, advice: str | None
) -> None:
    wr = yaml.safe_load(WR.read_text())
    wr["spec"]["numNodes"] = 8
    # Explicit, so a node reporting 4 GPUs is short of it (without it the count would come
    # from the nodes themselves, and a fleet of 4-GPU nodes would simply run 4 per node).
    wr["spec"]["gpusPerNode"] = 8
    stream = yaml.safe_dump_all([wr, *_short_node_inventory(short)]).encode()
    proc = run([], stream)
    assert proc.returncode == 1
    if short:
        assert "gpu-node-01" in proc.stderr, "the node that cannot run the job is named"
    if advice is None:
        assert "set numNodes to" not in proc.stderr, proc.stderr
    else:
        assert "not enough eligible nodes: need 8 (numNodes)" in proc.stderr
        assert re.findall(r"set numNodes to \d+ or fewer", proc.stderr) == [advice], proc.stderr


# --- the small items of issue 18 -------------------------------------------------------------


def test_dockerfile_run_line_passes_the_registry_key() -> None:
    text = (REPO / "Dockerfile").read_text().replace("\\\n#", "")
    (line,) = [ln for ln in text.splitlines() if "docker run" in ln]
    assert "-e NGC_API_KEY" in line


def test_readme_report_example_creates_the_logs_directory() -> None:
    readme = (REPO / "README.md").read_text()
    block = next(b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if "--logs logs/" in b)
    assert block.index("mkdir -p logs") < block.index('> "logs/')


def test_readme_docker_and_kustomize_examples_use_the_same_key_as_the_quick_start() -> None:
    readme = (REPO / "README.md").read_text()
    keys = set(re.findall(r"NGC_API_KEY=(\S+)", readme))
    assert keys == {"example-api-key"}


# --- issue 27: the render summary at fleet scale ----------------------------------------------


@pytest.fixture(scope="module")
def fleet_2000(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 realistic nodes (bench/make_inventory.py: some NotReady, cordoned or tainted)."""
    from tests.gitops.test_inventory_command import bench_inventory

    path = tmp_path_factory.mktemp("fleet") / "nodes.yaml"
    with path.open("w") as out:
        bench_inventory().write(out, 2000, 0, "aws", False, False, False)
    return path


def test_fleet_summary_is_a_screen_with_counts_and_the_first_names(fleet_2000: Path) -> None:
    proc = run(["render", str(WR), str(fleet_2000)])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) <= 10 and len(proc.stderr) < 2500, proc.stderr
    assert lines[1] == "WorkloadRun my-workload: 485 group(s), platform aws, GPU h100"
    assert (
        lines[2]
        == "  group-0: 4 node(s): gpu-aws-00000, gpu-aws-00001, gpu-aws-00002, gpu-aws-00003"
    )
    assert "  ... and 482 more group(s) (--verbose lists every group)" in lines
    assert (
        "wave 0: 484 TrainJob(s): my-workload-group-0, my-workload-group-1, "
        "my-workload-group-2 and 481 more; wave 1: my-workload-group-484-overflow"
    ) in proc.stderr


def test_untested_nodes_count_the_left_out_ones_of_the_warning(fleet_2000: Path) -> None:
    proc = run(["render", str(WR), str(fleet_2000)])
    left_out = re.search(r"(\d+) node\(s\) matching the target are left out", proc.stderr)
    assert left_out, proc.stderr
    n = left_out.group(1)
    assert (
        f"  untested nodes: {n} left out (the warning above says why): "
        "gpu-aws-00016, gpu-aws-00018, gpu-aws-00029 and 60 more"
    ) in proc.stderr.splitlines()
    assert "untested nodes: none" not in proc.stderr


def test_verbose_lists_every_group_node_and_trainjob(fleet_2000: Path) -> None:
    proc = run(["render", "--verbose", str(WR), str(fleet_2000)])
    assert proc.returncode == 0, proc.stderr
    groups = re.findall(r"^  group-\d+(?:-overflow)?: ", proc.stderr, re.M)
    assert len(groups) == 485
    assert (
        "my-workload-group-483; wave 1" in proc.stderr
        and "more" not in proc.stderr.split("\n", 1)[1]
    )
    (untested,) = [ln for ln in proc.stderr.splitlines() if "untested nodes" in ln]
    assert untested.count("gpu-aws-") == 63
    assert "gpu-aws-00016 (NotReady), gpu-aws-00018 (cordoned (spec.unschedulable))" in untested


@pytest.mark.parametrize(
    ("release", "says"),
    [
        ("suspend", "later waves are rendered suspended; release each when the previous"),
        ("engine", "the GitOps engine applies each when the previous one completed"),
    ],
    ids=["suspend-says-release-each-wave", "engine-says-the-engine-applies-them"],
)
def test_the_wave_line_says_how_later_waves_start(tmp_path: Path, release: str, says: str) -> None:
    run_yaml = yaml.safe_load(WR.read_text())
    run_yaml["spec"]["numNodes"] = 5  # 16 nodes: 3 groups, then an overflow group in wave 1
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run_yaml))
    (tmp_path / "cfg.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: {{waveRelease: {release}}}\n"
    )
    args = [str(tmp_path / "run.yaml"), str(NODES), "--config", str(tmp_path / "cfg.yaml")]
    proc = run(["render", *args])
    assert proc.returncode == 0, proc.stderr
    assert f"  2 waves ({says}" in proc.stderr
    assert ("suspend: true" in proc.stdout) == (release == "suspend")


def test_skipped_remainder_and_left_out_nodes_both_count_as_untested(tmp_path: Path) -> None:
    nodes = yaml.safe_load(NODES.read_text())
    nodes["items"][0]["spec"]["unschedulable"] = True  # gpu-node-01: 15 nodes left, 3 over
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump(nodes))
    (tmp_path / "cfg.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {remainder: skip}\n"
    )
    proc = run(
        ["render", str(WR), str(tmp_path / "nodes.yaml"), "--config", str(tmp_path / "cfg.yaml")]
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "  untested nodes: 4: 1 left out (the warning above says why): gpu-node-01; "
        "3 not filling a last group (remainder: skip): gpu-node-14, gpu-node-15, gpu-node-16"
    ) in proc.stderr.splitlines()


# --- issue 27: errors that say the fix ----------------------------------------------------


def test_no_node_in_the_input_says_how_to_pass_nodes_or_preview() -> None:
    rel = str(WR.relative_to(REPO))
    proc = run(["render", rel])
    assert proc.returncode == 1
    assert (
        "[error] WorkloadRun my-workload: no eligible nodes: the input holds no Node. Pass the "
        f"inventory with the run: a file (workloadrun-fn render {rel} nodes.yaml), a cluster's "
        f"(kubectl get nodes -o yaml | workloadrun-fn render {rel} -), or in kpt and kustomize "
        "the inventory option or Node resources; or preview without a cluster on synthetic "
        f"nodes: --platform NAME and/or --gpu-arch NAME (options platform, gpuArch) ({rel}#0)"
    ) in proc.stderr.splitlines()
    assert "0 Node(s) in the input" not in proc.stderr


def _b200_run(tmp_path: Path) -> Path:
    wr = yaml.safe_load(WR.read_text())
    wr["spec"]["numNodes"] = 2
    wr["spec"]["target"] = {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-B200"}}
    path = tmp_path / "b200.yaml"
    path.write_text(yaml.safe_dump(wr))
    return path


def test_preview_whose_gpu_arch_contradicts_the_target_names_both_gpus(tmp_path: Path) -> None:
    path = _b200_run(tmp_path)
    proc = run(["render", "--platform", "aws", "--gpu-arch", "h100", str(path)])
    assert proc.returncode == 1
    assert (
        "spec.target: no eligible nodes: the input holds no Node, and none of the 2 synthetic "
        "node(s) standing in for it (offline preview: --platform/--gpu-arch, options "
        "platform/gpuArch) matches spec.target: they carry "
        "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 (from --gpu-arch h100) but the target "
        "selects NVIDIA-B200; leave out --gpu-arch to preview the target's GPU; to render on "
        "real nodes, pass Node files"
    ) in proc.stderr
    assert "Node(s) in the input" not in proc.stderr
    fixed = run(["render", "--platform", "aws", str(path)])  # as the message says
    assert fixed.returncode == 0, fixed.stderr
    assert "platform aws, GPU b200" in fixed.stderr


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        ({"registry": "nvcr.io"}, "registryUsername, registryPasswordEnv"),
        ({"registry": "nvcr.io", "registryUsername": "$oauthtoken"}, "registryPasswordEnv"),
        ({"registryUsername": "u", "registryPasswordEnv": "NGC_API_KEY"}, "registry"),
    ],
    ids=["registry-alone", "password-env-missing", "registry-missing"],
)
def test_partial_registry_setup_names_the_missing_option(
    given: dict[str, str], missing: str, tmp_path: Path
) -> None:
    cfg = {"apiVersion": "fn.nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRunRender"}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump({**cfg, "spec": given}))
    proc = run(["render", "fixtures/", "--config", str(tmp_path / "cfg.yaml")])
    assert proc.returncode == 1
    assert (
        "[error] functionConfig spec: a generated pull Secret needs registry, registryUsername "
        "and registryPasswordEnv (the name of the variable holding the password, e.g. "
        f"NGC_API_KEY); missing: {missing}. Without a generated Secret: registryPullSecret alone "
        "names a Secret in the cluster, or registrySecretStore and registrySecretKey (instead of "
        "registryPasswordEnv) make an ExternalSecret"
    ) in proc.stderr.splitlines()


def test_discover_on_a_directory_without_a_run_says_so(tmp_path: Path) -> None:
    (tmp_path / "deployment.yaml").write_text("kind: Deployment\n")
    proc = run(["discover", str(tmp_path)])
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        f"discover: no WorkloadRun or WorkloadRunRender in {tmp_path} (its non-hidden *.yaml, "
        "*.yml, *.json files, or a base its kustomization builds on)\n"
    )


def test_discover_on_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    proc = run(["discover", str(tmp_path / "nosuch")])
    assert proc.returncode == 2
    assert f"Directory '{tmp_path / 'nosuch'}' does not exist" in proc.stderr


KLOG = 'E1203 19:12:14.817864 13949 memcache.go:265] "Unhandled Error" err="connection refused"'
REFUSED = "The connection to the server localhost:8080 was refused - did you specify the right host or port?"


def test_release_without_a_cluster_is_an_environment_error_in_one_line(tmp_path: Path) -> None:
    kubectl = tmp_path / "kubectl"  # what kubectl prints without a cluster: 7 klog lines, 1 plain
    kubectl.write_text(
        f"#!/bin/sh\nfor i in 1 2 3 4 5 6 7; do echo '{KLOG}' >&2; done\n"
        f"echo '{REFUSED}' >&2\nexit 1\n"
    )
    kubectl.chmod(0o755)
    proc = run(["release", "my-workload", "--once", "--kubectl", str(kubectl)])
    assert proc.returncode == 2, proc.stderr  # not 1: no TrainJob failed
    assert proc.stderr == (
        f"release: cannot reach the TrainJobs of my-workload: {kubectl} get "
        f"trainjobs.trainer.kubeflow.org failed: {REFUSED} (does kubectl's current context name "
        "the cluster? kubectl config current-context)\n"
    )


@pytest.mark.parametrize(
    ("kubectl_says", "code", "says"),
    [
        (
            "echo '{\"items\": []}'",
            1,
            "release my-workload: no TrainJob of this run in namespace ml: apply the rendered "
            "objects first, or name their namespace with -n\n",
        ),
        (
            "echo 'error: the server does not have a resource type \"trainjobs\"' >&2; exit 1",
            2,
            "(the cluster has no TrainJob CRD: install Kubeflow Trainer v2 in it first)\n",
        ),
    ],
    ids=["no-trainjob-names-the-namespace-and-the-fix", "no-trainer-crd-says-install-trainer"],
)
def test_release_says_what_is_missing_in_the_cluster(
    tmp_path: Path, kubectl_says: str, code: int, says: str
) -> None:
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(f"#!/bin/sh\n{kubectl_says}\n")
    kubectl.chmod(0o755)
    proc = run(["release", "my-workload", "--once", "-n", "ml", "--kubectl", str(kubectl)])
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.endswith(says), proc.stderr


def test_release_without_kubectl_says_how_to_name_it() -> None:
    proc = run(["release", "my-workload", "--once"], env={"WORKLOADRUN_FN_KUBECTL": "no-kubectl"})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        "release: cannot reach the TrainJobs of my-workload: cannot run no-kubectl: No such file "
        "or directory; install kubectl or name it with --kubectl (or WORKLOADRUN_FN_KUBECTL)\n"
    )


# --- issue 27: small wrong outputs of the Flux path -----------------------------------------


def test_render_in_ci_counts_the_trainjobs_of_a_single_wave(tmp_path: Path) -> None:
    script = REPO / "deploy" / "flux" / "render-in-ci.sh"
    proc = subprocess.run(
        [str(script), str(REPO / "kustomization-examples" / "argocd-app"), "rendered/gpu"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**ENV, "HOME": str(tmp_path), "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert [d.name for d in (tmp_path / "rendered" / "gpu").glob("wave-*")] == ["wave-0"]
    assert proc.stderr.splitlines()[-1] == "render-in-ci: wrote rendered/gpu (4 TrainJob(s))"
    assert "flux-layout: dependencies" not in proc.stderr  # its directory is a deleted temp one


def test_flux_layout_warns_about_a_secret_holding_the_password(tmp_path: Path) -> None:
    rendered = run(["render", "fixtures/"], env={"WORKLOADRUN_FN_WAVE_RELEASE": "engine"})
    assert rendered.returncode == 0, rendered.stderr
    (tmp_path / "rendered.yaml").write_text(rendered.stdout)
    args = ["--name", "gpu", "--path-prefix", "./out"]
    proc = run(["flux-layout", str(tmp_path / "rendered.yaml"), str(tmp_path / "out"), *args])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        "flux-layout: warning: dependencies/ holds Secret my-workload-pull-secret with its data: "
        "Flux applies what its source holds, so it lands in git or the OCI artifact; instead "
        "reference a Secret that exists in the cluster (registryPullSecret: NAME) or let the "
        "External Secrets Operator fetch it (registrySecretStore and registrySecretKey)"
    )
    assert "newcomer-key-1" not in proc.stderr


def test_flux_layout_of_a_render_without_a_plain_secret_says_nothing_of_secrets(
    tmp_path: Path,
) -> None:
    rendered = run(
        ["render", "kustomization-examples/argocd-app"],
        env={"WORKLOADRUN_FN_WAVE_RELEASE": "engine"},
    )
    assert rendered.returncode == 0, rendered.stderr
    (tmp_path / "r.yaml").write_text(rendered.stdout)
    args = ["--name", "gpu", "--path-prefix", "./out"]
    proc = run(["flux-layout", str(tmp_path / "r.yaml"), str(tmp_path / "out"), *args])
    assert proc.returncode == 0 and "Secret" not in proc.stderr, proc.stderr


# --- issue 27: the README's newcomer path, as pasted ------------------------------------------

RUNNABLE = "<!-- runnable -->"


def _runnable_blocks() -> list[str]:
    readme = (REPO / "README.md").read_text()
    return re.findall(rf"^{RUNNABLE}\n```sh\n(.*?)^```$", readme, re.S | re.M)


def test_every_runnable_marker_sits_on_a_shell_block_and_development_documents_it() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(re.findall(rf"^{RUNNABLE}$", readme, re.M)) == len(_runnable_blocks()) > 0
    development = readme[readme.index("\n## Development\n") :]
    assert f"`{RUNNABLE}`" in development


def test_the_runnable_blocks_are_a_newcomers_whole_path() -> None:
    blocks = _runnable_blocks()
    sh = re.findall(r"```sh\n(.*?)\n```", (REPO / "README.md").read_text(), re.S)
    assert blocks[0].strip() == sh[0].strip(), "the path starts with the quick start's install"
    assert sh[1] + "\n" not in blocks, "the test suite is not part of the path"
    path = "\n".join(blocks)
    for way_in in (". .venv/bin/activate", "workloadrun-fn render --platform", "kpt fn render",
                   "kpt fn eval", "kubectl kustomize", "render-in-ci.sh"):  # fmt: skip
        assert way_in in path, way_in
    assert path.index("activate") < path.index("kpt fn"), "on PATH before kpt's --exec needs it"


@pytest.mark.e2e
def test_the_readme_runnable_blocks_run_in_order_as_pasted_on_a_fresh_checkout(
    tmp_path: Path,
) -> None:
    """install, put on PATH, preview, kpt (both modes), kubectl kustomize, Flux: one shell,
    a copy of the checkout, no virtualenv of ours on PATH, a fresh HOME."""
    from tests.e2e.helpers import BIN, need
    from tests.gitops.test_flux import _checkout_of_this_repository

    need("kpt"), need("kubectl")
    checkout = tmp_path / "clone"
    _checkout_of_this_repository(checkout)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != BIN)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XDG_", "KUSTOMIZE_", "VIRTUAL_ENV", "WORKLOADRUN_", "NGC_"))
    }
    env.update(PATH=path, HOME=str(tmp_path / "home"))
    script = "set -euo pipefail\n" + "\n".join(_runnable_blocks())
    proc = subprocess.run(
        ["bash", "-c", script], cwd=checkout, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert proc.stdout.count("kind: TrainJob") >= 4 * 4  # render, preview, kpt twice, kustomize
    assert "render-in-ci: wrote rendered/gpu-validation (4 TrainJob(s))" in proc.stderr
    assert (checkout / "rendered" / "gpu-validation" / "flux" / "kustomizations.yaml").is_file()


@pytest.mark.parametrize(
    ("inputs", "says"),
    [
        (
            ["kustomization-examples/overlay-per-environment/overlays/dev"],
            "no WorkloadRun found in the input files: a kustomization is among them; build it "
            "with `kubectl kustomize --enable-alpha-plugins DIR`",
        ),
        (
            ["fixtures/nodes-16.yaml"],
            "no WorkloadRun found in the input files (only 16 Node(s)): add its file, "
            "`render run.yaml nodes.yaml`",
        ),
    ],
    ids=["a-kustomization-says-build-it-with-kustomize", "nodes-alone-say-add-the-run-file"],
)
def test_inputs_without_a_workloadrun_say_how_to_give_one(inputs: list[str], says: str) -> None:
    proc = run(["render", *inputs])
    assert proc.returncode == 1
    assert says in proc.stderr


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (
            {"target": {"matchLabels": {"rack": "r1"}}},
            "spec.target.matchLabels: unknown field 'matchLabels': not part of the WorkloadRun "
            "API; spec.target takes matchExpressions, nodeNames, nodeSelector, taintSelectors",
        ),
        (
            {"overrides": [{"jobTemplate": {"spec": {}}}]},
            "spec.overrides[0].when: required field is missing (`when: {}` applies the override "
            "to every run)",
        ),
    ],
    ids=["kubernetes-matchlabels-lists-what-target-takes", "override-without-when-says-when-{}"],
)
def test_common_spec_mistakes_say_what_to_write(
    tmp_path: Path, spec: dict[str, Any], says: str
) -> None:
    run_yaml = yaml.safe_load(WR.read_text())
    run_yaml["spec"].update(spec)
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run_yaml))
    proc = run(["render", str(tmp_path / "run.yaml"), str(NODES)])
    assert proc.returncode == 1
    assert says in proc.stderr


def test_function_config_problems_are_one_line_each_with_the_value(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
        "data: {waveRelease: engines, remainder: overflw}\n"
    )
    proc = run(["render", str(WR), str(NODES), "--config", str(cfg)])
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "[error] functionConfig data.waveRelease: Input should be 'suspend' or 'engine' "
        "(got 'engines')",
        "[error] functionConfig data.remainder: Input should be 'overflow' or 'skip' (got 'overflw')",
        "workloadrun-fn render: 2 error(s); nothing rendered",
    ]
