"""The function's own options, from a ``ConfigMap`` or the typed ``WorkloadRunRender`` kind.

Invariants:
    * The same option names are used in both forms (ConfigMap ``data`` keys are strings and
      are converted; the typed kind's ``spec`` is typed).
    * A registry password is never taken from a file: only the *name* of an environment
      variable that holds it (``registryPasswordEnv``). A plain ``registryPassword`` is refused.
    * Unknown options are errors naming the option.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel, to_snake

from krm_fn.api import models

CONFIG_API_VERSION = "fn.nvcre.nvidia.com/v1alpha1"
CONFIG_KIND = "WorkloadRunRender"


def _given(value: Any) -> Any:
    """NVCRE's flags: an empty string is a flag not given."""
    return None if value == "" else value


def _names(value: Any) -> Any:
    """A comma-separated node list (NVCRE's ``--node-list``) or a list; blanks and repeats go."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return value
    names = [str(v).strip() if isinstance(v, str) else v for v in value]
    return list(dict.fromkeys(n for n in names if n != ""))


def _test_scale(value: str | None) -> str | None:
    """The WorkloadRun's own ``spec.orchestration.testScale`` values."""
    try:
        models.Orchestration.model_validate({"testScale": value})
    except ValidationError as exc:
        raise ValueError(exc.errors()[0]["msg"]) from None
    return value


RUN_FLAGS = ("node_list", "topology_domain", "topology_key", "test_scale")
"""The options that are NVCRE's ``nvcrectl workloadrun run`` flags (also ``render`` options)."""


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
    platform_catalog: list[str] = Field(
        default_factory=list,
        description=(
            "Site platform catalog files (comma- or newline-separated in a ConfigMap or "
            "annotation), paths resolved like `inventory`: platforms and override entries "
            'merged after the bundled table (docs/platforms.md, "A site\'s own platform").'
        ),
        examples=[["platforms/site.yaml"]],
    )
    node_list: Annotated[list[str], BeforeValidator(_names)] = Field(
        default_factory=list,
        description="Comma-separated node names: the run uses only these nodes "
        "(`target.nodeNames`), and `numNodes` is lowered to the number of them that exist and "
        "are eligible, never raised (NVCRE's `--node-list`); like NVCRE's discovery, nodes "
        "without `nvidia.com/gpu.present=true` stay out of a run without a target of its own.",
        examples=["gpu-node-01,gpu-node-02"],
    )
    topology_domain: Annotated[
        str | None,
        BeforeValidator(_given),
        models.checked(models.label_value_problem, "{value!r} is not a valid label value: {why}"),
    ] = Field(
        default=None,
        description="Run on the nodes of this topology domain only (a `target.matchExpressions` "
        "`In` on the topology key) and size `numNodes` to its eligible nodes (NVCRE's "
        "`--topology-domain`); with no target of its own, still only `nvidia.com/gpu.present` "
        "nodes.",
        examples=["nn-0001"],
    )
    topology_key: Annotated[
        str | None,
        BeforeValidator(_given),
        models.checked(models.label_key_problem, "{value!r} is not a valid label key: {why}"),
    ] = Field(
        default=None,
        description="The node label naming `topologyDomain`; default: the platform's topology "
        "key in the platform catalog, required on a platform without one (NVCRE's "
        "`--topology-key`).",
        examples=["example.com/rack"],
    )
    test_scale: Annotated[str | None, BeforeValidator(_given), AfterValidator(_test_scale)] = Field(
        default=None,
        description="Replaces `spec.orchestration.testScale`: `intra-node`, `intra-rack` or "
        "`full-scale` (NVCRE's `--test-scale`).",
        examples=["intra-node"],
    )

    @model_validator(mode="after")
    def _key_with_domain(self) -> FunctionOptions:
        if self.topology_key and not self.topology_domain:
            raise ValueError(
                "topologyKey names the label of topologyDomain and does nothing alone; set "
                "topologyDomain too, or leave topologyKey out"
            )
        return self

    @model_validator(mode="after")
    def _registry_together(self) -> FunctionOptions:
        if self.registry_password is not None:
            raise ValueError(
                "registryPassword is refused: a password must never be stored in a file; "
                "put it in an environment variable and set registryPasswordEnv to its name"
            )
        if self.registry_pull_secret:
            extra = [
                a for a in (*_PLAIN, "registrySecretStore", "registrySecretKey") if self._has(a)
            ]
            if extra:
                raise ValueError(
                    "registryPullSecret references an existing Secret that already holds the "
                    f"credentials; leave out {', '.join(extra)}"
                )
            return self
        if self.registry_secret_store or self.registry_secret_key:
            if need := [a for a in _EXTERNAL if not self._has(a)]:
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
        missing = [a for a in _PLAIN if not self._has(a)]
        if len(missing) in (1, 2):
            raise ValueError(
                "a generated pull Secret needs registry, registryUsername and "
                f"registryPasswordEnv (the name of the variable holding the password, e.g. "
                f"NGC_API_KEY); missing: {', '.join(missing)}. Without a generated Secret: "
                "registryPullSecret alone names a Secret in the cluster, or registrySecretStore "
                "and registrySecretKey (instead of registryPasswordEnv) make an ExternalSecret"
            )
        return self

    def _has(self, alias: str) -> bool:
        """Whether the option ``alias`` (its name in the config) is set and not empty."""
        return bool(getattr(self, to_snake(alias)))


_PLAIN = ("registry", "registryUsername", "registryPasswordEnv")
"""The options of a generated pull Secret."""
_EXTERNAL = ("registry", "registryUsername", "registrySecretStore", "registrySecretKey")
"""The options of a generated ExternalSecret."""
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
        elif k in ("inventory", "platformCatalog"):
            raw[k] = [p.strip() for p in str(v).replace(",", "\n").splitlines() if p.strip()]
        else:
            raw[k] = v
    return raw


def options_from_config(fc: dict[str, Any] | None) -> FunctionOptions:
    """Build options from a functionConfig object.

    Accepted forms: ``None`` (defaults), a ``v1`` ``ConfigMap`` (``data`` strings), the typed
    ``WorkloadRunRender`` kind (``spec``), and a ``WorkloadRun`` used as the generator config
    (defaults; the WorkloadRun itself is an input). A ValueError names the option and the
    allowed values.
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


def with_options(options: FunctionOptions, given: dict[str, Any], where: str) -> FunctionOptions:
    """``options`` with the ``given`` ones (by option name) replacing theirs, validated again.

    A ValueError as :func:`options_from_config`'s, the problem's place named by ``where``.
    """
    return _validate({**options.model_dump(by_alias=True, exclude_none=True), **given}, where)


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


def error_text(err: Any) -> str:
    """A pydantic error of one option, with the text a field was given (never an object)."""
    msg, value = str(err["msg"]).removeprefix("Value error, "), err["input"]
    shown = err["loc"] and isinstance(value, str) and repr(value) not in msg
    return f"{msg} (got {value!r})" if shown else msg


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
                msgs.append(f"{path}: {error_text(err)}")
        raise ValueError("\n".join(msgs)) from None  # one line per problem
