"""What the function does differently when its output goes to git or to a GitOps engine.

Invariants:
    * Options may come from the environment: ``WORKLOADRUN_FN_<OPTION>`` (the option's name in
      upper snake case, e.g. ``WORKLOADRUN_FN_REGISTRY_PULL_SECRET`` for ``registryPullSecret``)
      overrides the functionConfig; every option taken from there is named in an info result.
      This is how the Argo CD plugin and the Flux script pass options (``ARGOCD_ENV_*``) into a
      kustomization they cannot edit. ``registryPassword`` has no variable.
    * The function run (kpt, kustomize) refuses to put the registry password into its output
      (a plain ``kubernetes.io/dockerconfigjson`` Secret) unless ``plainPullSecret`` is true:
      kpt writes that output into the package, which GitOps commits. The ``render`` preview
      prints to the terminal and may still show it, unless ``WORKLOADRUN_FN_GITOPS=1`` (set by
      the Argo CD plugin and the Flux script) says its output goes to a GitOps engine.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from krm_fn.api.config import FunctionOptions, _from_strings, with_options

ENV_PREFIX = "WORKLOADRUN_FN_"
GITOPS_ENV = "WORKLOADRUN_FN_GITOPS"
"""Set to ``1`` by the GitOps paths: the ``render`` preview then refuses the plain Secret too."""
_NOT_FROM_ENV = frozenset({"registry_password"})
REMEDY = (
    "instead reference a Secret that exists in the cluster (registryPullSecret: NAME) or let "
    "the External Secrets Operator fetch it (registrySecretStore and registrySecretKey)"
)
"""How a GitOps path gets its pull Secret without a password in git (every refusal says it)."""


def env_name(field_name: str) -> str:
    """The environment variable of an option (by its Python field name)."""
    return ENV_PREFIX + field_name.upper()


ARGOCD_PREFIX = "ARGOCD_ENV_"
NOT_FROM_ARGOCD = {
    "registry_password_env": "Argo CD caches and shows generated manifests: no password",
    "plain_pull_secret": "Argo CD caches and shows generated manifests: no password",
    "wave_release": "the plugin releases waves with sync waves (engine)",
    "output_dir": "the plugin prints its objects; it writes no files",
    "inventory": "name the inventory in the repository's WorkloadRunRender instead",
}
"""Options an Argo CD Application may not set through its plugin env, and why."""


def argocd_exports(environ: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Shell ``export`` lines mapping ``ARGOCD_ENV_<OPTION>`` onto ``WORKLOADRUN_FN_<OPTION>``.

    The lines quote their values; a variable that names no option the plugin accepts is a
    problem naming the accepted ones (never its value).
    """
    allowed = sorted(
        n.upper()
        for n in FunctionOptions.model_fields
        if n not in {*_NOT_FROM_ENV, *NOT_FROM_ARGOCD}
    )
    exports, problems = [], []
    for var in sorted(v for v in environ if v.startswith(ARGOCD_PREFIX)):
        name = var.removeprefix(ARGOCD_PREFIX)
        if name in allowed:
            exports.append(f"export {ENV_PREFIX}{name}={shlex.quote(environ[var])}")
        else:
            why = NOT_FROM_ARGOCD.get(name.lower()) if name.isupper() else None
            problems.append(
                f"{var} is not an option of this plugin{f' ({why})' if why else ''}; allowed: "
                + " ".join(allowed)
            )
    return exports, problems


def with_env(
    options: FunctionOptions, environ: Mapping[str, str]
) -> tuple[FunctionOptions, list[str]]:
    """``options`` with the ``WORKLOADRUN_FN_*`` variables applied; and the options they set.

    An invalid value is a ValueError naming the variable's option.
    """
    names = {
        env_name(n): info.alias or n
        for n, info in FunctionOptions.model_fields.items()
        if n not in _NOT_FROM_ENV
    }
    given = {names[k]: v for k, v in sorted(environ.items()) if k in names and v != ""}
    if not given:
        return options, []
    where = "and WORKLOADRUN_FN_* environment"
    return with_options(options, _from_strings(given), where), sorted(given)


def plain_secret_refusal(options: FunctionOptions) -> str | None:
    """Why the function run must not write the plain pull Secret; ``None`` when it may."""
    if not options.registry_password_env or options.plain_pull_secret:
        return None
    return (
        "registryPasswordEnv would put the registry password into a plain Secret in the "
        "function's output, which kpt writes into the package files and a GitOps repository "
        f"commits; {REMEDY}; to write the password into the output on purpose, set "
        'plainPullSecret: "true" (docs/gitops.md: "Registry credentials in GitOps")'
    )
