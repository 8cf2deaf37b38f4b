"""The function's own options, from a ``ConfigMap`` or the typed ``WorkloadRunRender`` kind.

Invariants:
    * The same option names are used in both forms (ConfigMap ``data`` keys are strings and
      are converted; the typed kind's ``spec`` is typed).
    * A registry password is never taken from a file: only the *name* of an environment
      variable that holds it (``registryPasswordEnv``). A plain ``registryPassword`` is refused.
    * Unknown options are errors naming the option.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

CONFIG_API_VERSION = "fn.nvcre.nvidia.com/v1alpha1"
CONFIG_KIND = "WorkloadRunRender"


class FunctionOptions(BaseModel):
    """Options of one function run (see the README's option table).

    Read in lax mode, unlike the WorkloadRun models: ``strictGpuArch: "yes"`` is ``True``.
    """

    model_config = ConfigDict(
        extra="forbid", strict=False, frozen=True, populate_by_name=True, alias_generator=to_camel
    )

    registry: str | None = Field(
        default=None,
        description="Registry of the image; with the two below, a dockerconfigjson Secret "
        "`<run>-pull-secret` on every pod.",
        examples=["nvcr.io"],
    )
    registry_username: str | None = Field(
        default=None,
        description="Registry user (`$oauthtoken` is taken literally, as NGC wants).",
        examples=["$oauthtoken"],
    )
    registry_password_env: str | None = Field(
        default=None,
        description="*Name* of the environment variable holding the password, read at render.",
        examples=["NGC_API_KEY"],
    )
    registry_password: Any = Field(
        default=None,
        repr=False,
        description="Refused: a password never goes in a file; use `registryPasswordEnv`.",
        examples=["s3cret"],
    )
    registry_pull_secret: str | None = Field(
        default=None,
        description="An existing pull Secret of the run's namespace, named on every pod; "
        "nothing is generated. Excludes the registry options.",
        examples=["ngc-pull"],
    )
    registry_secret_store: str | None = Field(
        default=None,
        description="External Secrets store (`NAME`, `SecretStore/NAME`, "
        "`ClusterSecretStore/NAME`): an ExternalSecret `<run>-pull-secret` instead of the Secret.",
        examples=["ClusterSecretStore/ngc"],
    )
    registry_secret_key: str | None = Field(
        default=None,
        description="Key of the password in that store (`remoteRef.key`).",
        examples=["ngc-api-key"],
    )
    registry_secret_property: str | None = Field(
        default=None,
        description="Field of a JSON secret in the store holding the password.",
        examples=["password"],
    )
    plain_pull_secret: bool = Field(
        default=False,
        description="Opt in to write the plain Secret, password included, into the output "
        "(kpt files it into the package); without it `registryPasswordEnv` is refused.",
        examples=[True],
    )
    wave_release: Literal["suspend", "engine"] = Field(
        default="suspend",
        description="`suspend`: later waves are `suspend: true` (released by `workloadrun-fn "
        "release`); `engine`: nothing suspended, the GitOps engine orders the waves.",
        examples=["engine"],
    )
    remainder: Literal["overflow", "skip"] = Field(
        default="overflow",
        description="Eligible nodes that do not fill a last group: `overflow` (one more group "
        "borrowing nodes of the last full one) or `skip` (left out, with a warning).",
        examples=["skip"],
    )
    output_dir: str = Field(
        default="generated",
        description="Directory (next to the WorkloadRun's file) kpt writes the objects to.",
        examples=["rendered"],
    )
    platform: str | None = Field(
        default=None,
        description="The platform instead of the detected one (previews; names in "
        "docs/platforms.md).",
        examples=["aws"],
    )
    gpu_arch: str | None = Field(
        default=None,
        description="The GPU architecture instead of the detected one (previews); a product "
        "name such as `NVIDIA-H100-80GB-HBM3` is accepted too.",
        examples=["h100"],
    )
    strict_gpu_arch: bool = Field(
        default=False,
        description="Mixed GPU products are an error instead of a majority vote with a warning.",
        examples=[True],
    )
    inventory: list[str] = Field(
        default_factory=list,
        description="Extra Node files or directories (comma-separated in a ConfigMap), for "
        "generators that receive no resources.",
        examples=[["nodes.yaml"]],
    )

    @model_validator(mode="after")
    def _registry_together(self) -> FunctionOptions:
        if self.registry_password is not None:
            raise ValueError(
                "registryPassword is refused: a password must never be stored in a file; "
                "put it in an environment variable and set registryPasswordEnv to its name"
            )
        if self.registry_pull_secret:
            extra = [
                n
                for n, v in (
                    ("registry", self.registry),
                    ("registryUsername", self.registry_username),
                    ("registryPasswordEnv", self.registry_password_env),
                    ("registrySecretStore", self.registry_secret_store),
                    ("registrySecretKey", self.registry_secret_key),
                )
                if v
            ]
            if extra:
                raise ValueError(
                    "registryPullSecret references an existing Secret that already holds the "
                    f"credentials; leave out {', '.join(extra)}"
                )
            return self
        if self.registry_secret_store or self.registry_secret_key:
            need = [
                n
                for n, v in (
                    ("registry", self.registry),
                    ("registryUsername", self.registry_username),
                    ("registrySecretStore", self.registry_secret_store),
                    ("registrySecretKey", self.registry_secret_key),
                )
                if not v
            ]
            if need:
                raise ValueError(
                    "an ExternalSecret needs registry, registryUsername, registrySecretStore and "
                    f"registrySecretKey; missing: {', '.join(need)}"
                )
            if self.registry_password_env:
                raise ValueError(
                    "registrySecretStore and registryPasswordEnv exclude each other: the "
                    "ExternalSecret fetches the password in the cluster; leave out "
                    "registryPasswordEnv"
                )
            kind, _, name = (self.registry_secret_store or "").rpartition("/")
            if kind not in ("", "SecretStore", "ClusterSecretStore") or not name:
                raise ValueError(
                    f"registrySecretStore {self.registry_secret_store!r}: write NAME, "
                    "SecretStore/NAME or ClusterSecretStore/NAME"
                )
            return self
        given = [self.registry, self.registry_username, self.registry_password_env]
        if any(given) and not all(given):
            raise ValueError(
                "registry, registryUsername and registryPasswordEnv must all be set together "
                "and non-empty"
            )
        return self


_BOOL = {"true": True, "false": False}
OPTION_ANNOTATION_PREFIX = "fn.nvcre.nvidia.com/"


def _from_strings(data: dict[str, Any]) -> dict[str, Any]:
    """Convert string-valued options (ConfigMap data, annotations) to their types."""
    raw: dict[str, Any] = {}
    for k, v in data.items():
        if k in ("strictGpuArch", "plainPullSecret"):
            if str(v).lower() not in _BOOL:
                raise ValueError(f"functionConfig option {k}: {v!r} is not true or false")
            raw[k] = _BOOL[str(v).lower()]
        elif k == "inventory":
            raw[k] = [p.strip() for p in str(v).replace(",", "\n").splitlines() if p.strip()]
        else:
            raw[k] = v
    return raw


def options_from_config(fc: dict[str, Any] | None) -> FunctionOptions:
    """Build options from a functionConfig object.

    Accepted forms: ``None`` (defaults), a ``v1`` ``ConfigMap`` (``data`` strings), the typed
    ``WorkloadRunRender`` kind (``spec``), and a ``WorkloadRun`` used as the generator config
    (defaults; the WorkloadRun itself is an input).

    Raises:
        ValueError: With a message naming the option and the allowed values.

    """
    if not fc:
        return FunctionOptions()
    kind = fc.get("kind")
    if kind == "ConfigMap":
        data = fc.get("data") or {}
        if not isinstance(data, dict):
            raise ValueError("functionConfig ConfigMap data must be a mapping")
        return _validate(_from_strings(data), "data")
    if kind == CONFIG_KIND:
        spec = fc.get("spec") or {}
        if not isinstance(spec, dict):
            raise ValueError(f"functionConfig {CONFIG_KIND} spec must be a mapping")
        return _validate(spec, "spec")
    if kind == "WorkloadRun":
        ann = (fc.get("metadata") or {}).get("annotations") or {}
        raw = {
            k.removeprefix(OPTION_ANNOTATION_PREFIX): v
            for k, v in ann.items()
            if k.startswith(OPTION_ANNOTATION_PREFIX)
        }
        return _validate(_from_strings(raw), f"metadata.annotations[{OPTION_ANNOTATION_PREFIX}*]")
    raise ValueError(
        f"functionConfig of kind {kind!r} is not supported; use a ConfigMap or "
        f"{CONFIG_API_VERSION} {CONFIG_KIND}"
    )


REFUSED_OPTIONS = frozenset({"registryPassword"})
"""Declared only to be refused with a reason: never offered as a suggestion."""


def offered_options() -> list[str]:
    """The option names a user may set, sorted (the refused ones left out)."""
    keys = (f.alias or n for n, f in FunctionOptions.model_fields.items())
    return sorted(k for k in keys if k not in REFUSED_OPTIONS)


def _did_you_mean(name: str) -> str:
    import difflib

    allowed = offered_options()
    by_lower = {k.lower(): k for k in allowed}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    hint = f" (did you mean {by_lower[close[0]]}?)" if close else ""
    return f"{hint}; allowed options: {', '.join(allowed)}"


def _validate(raw: dict[str, Any], where: str) -> FunctionOptions:
    try:
        return FunctionOptions.model_validate(raw)
    except ValidationError as exc:
        msgs = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            path = f"functionConfig {where}.{loc}" if loc else f"functionConfig {where}"
            if err["type"] == "extra_forbidden":
                msgs.append(f"{path}: unknown option{_did_you_mean(str(err['loc'][-1]))}")
            else:
                msg = err["msg"].removeprefix("Value error, ")
                msgs.append(f"{path}: {msg}")
        raise ValueError("; ".join(msgs)) from None
