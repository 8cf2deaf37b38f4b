"""A local stand-in for the pods: stub programs first on PATH, kubelet's ``$(VAR)`` expansion.

Nothing here talks to a cluster. A :class:`Sandbox` is a temporary directory with

* ``stubs/``: programs that record how they were called, then succeed (or fail as planned):
  ``mpirun``, ``torchrun`` and ``user-tool`` (Python, record argv and chosen env vars as JSON),
  ``sshd``, ``ssh``, ``timeout``, ``sleep``, ``apt-get`` (POSIX sh, builtins only, because the
  KAI wait loop calls them hundreds of times);
* ``tools/``: symlinks to the few real programs the scripts need (``cp``, ``awk``, ...), so the
  PATH holds nothing else: the machine's real ``ssh`` or ``sshd`` can never be reached;
* ``root/``: where the absolute paths of the pod scripts are redirected (see
  :meth:`Sandbox.redirect`).

What a container receives is computed the way the kubelet does it: env values are expanded
in order against the variables defined before them, then ``command`` and ``args`` against the
whole env (``k8s.io/kubernetes/third_party/forked/golang/expansion``: ``$(NAME)`` of a defined
variable is replaced, ``$$`` becomes ``$``, anything else is kept).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TOOLS = (
    "sh",
    "bash",
    "cp",
    "chmod",
    "mkdir",
    "awk",
    "head",
    "sed",
    "grep",
    "cat",
    "ls",
    "rm",
    "touch",
)

# Absolute paths the pod scripts use, in the container, and where the sandbox puts them.
POD_PATHS = (
    "/usr/sbin/sshd",
    "/var/run/sshd",
    "/root/.ssh",
    "/tmp/mpi-ssh-raw",
    "/etc/mpi/hostfile",
    "/tmp/sshd-wait.err",
    "/proc/net/tcp6",
    "/proc/net/tcp",
)

RECORDER = """#!{python}
import json, os, sys
name = os.path.basename(sys.argv[0])
log = os.environ["STUB_LOG"]
n = len([f for f in os.listdir(log) if f.startswith(name + ".")])
wanted = [v for v in os.environ.get("RECORD_ENV", "").split(",") if v]
with open(os.path.join(log, f"{{name}}.{{n}}.json"), "w") as f:
    json.dump({{"argv": sys.argv[1:], "env": {{k: os.environ.get(k) for k in wanted}}}}, f)
"""

SH_STUBS = {
    # records its arguments (one line: they are fixed strings in the scripts) and succeeds
    "sshd": 'echo "$*" >> "$STUB_LOG/sshd.calls"\n',
    "apt-get": (
        'echo "$*" >> "$STUB_LOG/apt-get.calls"\n'
        'if [ "$1" = install ]; then\n'
        '  printf \'#!/bin/sh\\necho "$*" >> "$STUB_LOG/sshd.calls"\\n\' > "$SSHD_INSTALL_PATH"\n'
        '  chmod 755 "$SSHD_INSTALL_PATH"\n'
        "fi\n"
    ),
    # the fake clock: never waits, only counts
    "sleep": 'echo "$1" >> "$STUB_LOG/sleep.calls"\n',
    # timeout DURATION CMD...: record, then run CMD in this same process
    "timeout": 'echo "$1" >> "$STUB_LOG/timeout.calls"\nshift\nexec "$@"\n',
    # ssh ... HOST true: answers from attempt N on, N read from $STUB_PLAN/HOST (no file:
    # never answers). Builtins only.
    "ssh": (
        "host=\nprev=\n"
        'for a in "$@"; do host=$prev; prev=$a; done\n'
        'echo "$*" >> "$STUB_LOG/ssh.calls"\n'
        'count="$STUB_LOG/ssh.count.$host"\n'
        "n=0\n"
        '[ -f "$count" ] && read -r n < "$count"\n'
        "n=$((n + 1))\n"
        'echo "$n" > "$count"\n'
        'if [ -f "$STUB_PLAN/$host" ]; then\n'
        '  read -r need < "$STUB_PLAN/$host"\n'
        '  [ "$n" -ge "$need" ] && exit 0\n'
        "fi\n"
        'echo "ssh: connect to host $host port 22: Connection refused" >&2\n'
        "exit 255\n"
    ),
}


def kubelet_expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion of one command/args/env string."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "$" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close == -1:
                out.append("$(")
                i += 2
            else:
                name = text[i + 2 : close]
                out.append(env.get(name, f"$({name})"))
                i = close + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def container_env(env: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The env a container starts with (``value`` entries; ``valueFrom`` ones are skipped)."""
    out: dict[str, str] = {}
    for e in env:
        if "value" in e:
            out[e["name"]] = kubelet_expand(str(e.get("value") or ""), out)
    return out


def container_argv(container: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """``command + args`` as the process receives them (after kubelet expansion)."""
    return [kubelet_expand(s, env) for s in [*container["command"], *container.get("args", [])]]


class Sandbox:
    """A temporary directory standing in for a pod; see the module docstring."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stubs = root / "stubs"
        self.tools = root / "tools"
        self.log = root / "log"
        self.plan = root / "plan"
        self.fs = root / "root"
        for d in (self.stubs, self.tools, self.log, self.plan, self.fs / "usr/sbin"):
            d.mkdir(parents=True)
        for tool in TOOLS:
            real = shutil.which(tool, path="/usr/bin:/bin")
            assert real, f"{tool} is needed by the sandbox"
            (self.tools / tool).symlink_to(real)
        for name in ("mpirun", "torchrun", "user-tool"):
            self._stub(name, RECORDER.format(python=sys.executable))
        for name, body in SH_STUBS.items():
            self._stub(name, "#!/bin/sh\n" + body)

    def _stub(self, name: str, text: str) -> None:
        path = self.stubs / name
        path.write_text(text)
        path.chmod(0o755)

    def without(self, *names: str) -> None:
        """Remove stubs, e.g. ``ssh`` to make the readiness probe take its fallback."""
        for n in names:
            (self.stubs / n).unlink()

    def path_of(self, pod_path: str) -> Path:
        """Where the sandbox keeps ``pod_path`` (e.g. ``/root/.ssh``)."""
        return self.fs / pod_path.lstrip("/")

    def redirect(self, script: str) -> str:
        """Replace every absolute pod path of :data:`POD_PATHS` by its sandbox path, in one pass
        (so a sandbox path that happens to contain ``/root/.ssh`` is never replaced again)."""
        pattern = re.compile("|".join(re.escape(p) for p in POD_PATHS))
        return pattern.sub(lambda m: str(self.path_of(m.group(0))), script)

    def env(
        self, extra: Mapping[str, str] | None = None, record: Sequence[str] = ()
    ) -> dict[str, str]:
        env = {
            "PATH": f"{self.stubs}:{self.tools}",
            "STUB_LOG": str(self.log),
            "STUB_PLAN": str(self.plan),
            "RECORD_ENV": ",".join(record),
            "SSHD_INSTALL_PATH": str(self.path_of("/usr/sbin/sshd")),
            "LC_ALL": "C",
        }
        env.update(extra or {})
        return env

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        record: Sequence[str] = (),
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """Run an argv (never through a shell of ours) in the sandbox's environment."""
        return subprocess.run(
            list(argv),
            env=self.env(env, record),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def recorded(self, name: str) -> list[dict[str, Any]]:
        """Every call of a recording stub, in order: ``{"argv": [...], "env": {...}}``."""
        calls = sorted(self.log.glob(f"{name}.*.json"), key=lambda p: int(p.name.split(".")[1]))
        return [json.loads(p.read_text()) for p in calls]

    def calls(self, name: str) -> list[str]:
        """Lines logged by a sh stub (``sshd``, ``ssh``, ``sleep``, ``timeout``, ``apt-get``)."""
        f = self.log / f"{name}.calls"
        return f.read_text().splitlines() if f.exists() else []

    def plan_answer(self, host: str, from_attempt: int) -> None:
        """Make the stub ssh to ``host`` succeed from its ``from_attempt``-th call on."""
        (self.plan / host).write_text(f"{from_attempt}\n")


def write_ssh_secret(sandbox: Sandbox) -> None:
    """What Trainer mounts at /tmp/mpi-ssh-raw: the key pair and authorized_keys."""
    raw = sandbox.path_of("/tmp/mpi-ssh-raw")
    raw.mkdir(parents=True)
    for name in ("id_rsa", "id_rsa.pub", "authorized_keys"):
        (raw / name).write_text(f"fake {name}\n")
        (raw / name).chmod(0o644)


def mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777
