"""Read the function's input (ResourceList or plain stream) and write its output in the same form.

Invariants:
    * The input form decides the output form: a ``ResourceList`` is answered with a
      ``ResourceList`` (``config.kubernetes.io/v1`` or the ``v1beta1`` it came as), a plain
      multi-document stream with a plain stream.
    * Items are passed through as the same ``dict`` objects: nothing here edits them.
    * Every malformed document is reported at once, with its index, and nothing is returned
      for a malformed input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from krm_fn import yamlio
from krm_fn.results import Result, Results

RL_KIND = "ResourceList"
RL_API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")

Form = Literal["resourcelist", "stream"]


class InputError(ValueError):
    """The input cannot be read; ``results`` says why, for every document at once."""

    def __init__(self, results: list[Result]) -> None:
        """Keep the results that describe the problems."""
        super().__init__("; ".join(r.message for r in results))
        self.results = results


@dataclass
class FunctionInput:
    """What the orchestrator handed us."""

    items: list[dict[str, Any]]
    function_config: dict[str, Any] | None = None
    form: Form = "resourcelist"
    api_version: str = RL_API_VERSIONS[0]
    extra: dict[str, Any] = field(default_factory=dict)


def parse_input(text: str | bytes, source: str = "<stdin>") -> FunctionInput:
    """Parse stdin into a :class:`FunctionInput`.

    Args:
        text: The raw input.
        source: Name used in messages.

    Raises:
        InputError: With one result per problem found.
        yamlio.YAMLInputError: When the YAML itself is malformed.

    """
    docs = [d for d in yamlio.load_all(text, source) if d is not None]
    if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") == RL_KIND:
        return _from_resource_list(docs[0], source)
    return FunctionInput(items=check_items(docs, source), form="stream")


def _from_resource_list(rl: dict[str, Any], source: str) -> FunctionInput:
    problems = Results()
    api_version = rl.get("apiVersion")
    if api_version not in RL_API_VERSIONS:
        problems.error(
            f"{source}: ResourceList apiVersion {api_version!r} is not supported; "
            f"expected one of {', '.join(RL_API_VERSIONS)}"
        )
    if "items" not in rl:
        problems.error(f"{source}: ResourceList has no 'items' (required by the KRM spec)")
        raise InputError(problems.items)
    items = rl.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        problems.error(f"{source}: ResourceList 'items' must be a list, got {type(items).__name__}")
        raise InputError(problems.items)
    fc = rl.get("functionConfig")
    if fc is not None and not isinstance(fc, dict):
        problems.error(f"{source}: ResourceList 'functionConfig' must be a mapping")
    try:
        checked = check_items(items, f"{source} items")
    except InputError as exc:
        problems.items.extend(exc.results)
        checked = []
    if problems.has_errors:
        raise InputError(problems.items)
    return FunctionInput(
        items=checked,
        function_config=fc if isinstance(fc, dict) else None,
        form="resourcelist",
        api_version=str(api_version),
    )


def check_items(docs: list[Any], where: str) -> list[dict[str, Any]]:
    """Check that every document is a Kubernetes object (mapping with apiVersion and kind)."""
    problems = Results()
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            problems.error(
                f"{where}[{i}]: document is a {type(doc).__name__}, not a Kubernetes object mapping"
            )
            continue
        missing = [k for k in ("apiVersion", "kind") if not isinstance(doc.get(k), str)]
        if missing:
            problems.error(f"{where}[{i}]: object has no string {' or '.join(missing)}")
            continue
        meta = doc.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            problems.error(f"{where}[{i}]: metadata of {doc['kind']} must be a mapping")
    if problems.has_errors:
        raise InputError(problems.items)
    return docs


def write_output(inp: FunctionInput, items: list[dict[str, Any]], results: list[Result]) -> str:
    """Serialise the output in the form the input came in."""
    if inp.form == "stream":
        return yamlio.dump_all(items)
    out: dict[str, Any] = {"apiVersion": inp.api_version, "kind": RL_KIND, "items": items}
    if results:
        out["results"] = [r.to_krm() for r in results]
    return yamlio.dump(out)
