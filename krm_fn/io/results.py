"""Structured results (KRM ``results`` entries) and the collector every stage reports into.

Invariants:
    * A result never carries a secret value: messages are built from field paths and
      non-secret values only, and :func:`Results.redact` scrubs registered secrets again
      before anything is written.
    * Results keep the order in which they were reported; errors are counted so the caller
      can decide the exit code without scanning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]

LISTED = 10
"""Up to this many names are listed one by one in a message; more are a count and examples."""


def some(names: Sequence[str], shown: int = 3) -> str:
    """``a, b, c and 7 more``: the first ``shown`` names and how many are left unnamed."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def listed(names: Sequence[str]) -> str:
    """Every name up to :data:`LISTED` of them; past that, the first few (:func:`some`)."""
    return ", ".join(names) if len(names) <= LISTED else some(names)


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """Identifies the object a result is about."""

    api_version: str
    kind: str
    name: str
    namespace: str | None = None

    @classmethod
    def of(cls, obj: dict[str, Any]) -> ResourceRef:
        """Build a reference from an object's apiVersion, kind and metadata."""
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        name = meta.get("name")
        ns = meta.get("namespace")
        return cls(
            api_version=str(obj.get("apiVersion", "")),
            kind=str(obj.get("kind", "")),
            name=str(name) if name is not None else "",
            namespace=str(ns) if ns is not None else None,
        )

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"


@dataclass(frozen=True, slots=True)
class FileRef:
    """The file (and document index) an object came from, when known."""

    path: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class Result:
    """One KRM result."""

    message: str
    severity: Severity = "error"
    resource: ResourceRef | None = None
    field_path: str | None = None
    file: FileRef | None = None
    tags: tuple[tuple[str, str], ...] = ()

    def to_krm(self) -> dict[str, Any]:
        """Render as a ``config.kubernetes.io/v1`` Result mapping."""
        out: dict[str, Any] = {"message": self.message, "severity": self.severity}
        if self.resource is not None:
            ref: dict[str, Any] = {
                "apiVersion": self.resource.api_version,
                "kind": self.resource.kind,
                "name": self.resource.name,
            }
            if self.resource.namespace:
                ref["namespace"] = self.resource.namespace
            out["resourceRef"] = ref
            if self.field_path:
                out["field"] = {"path": self.field_path}
        if self.file is not None:
            out["file"] = {"path": self.file.path, "index": self.file.index}
        if self.tags:
            out["tags"] = dict(self.tags)
        return out

    def human(self) -> str:
        """One line for stderr."""
        parts = [f"[{self.severity}]"]
        reason = dict(self.tags).get("reason")
        if reason:
            parts.append(f"{reason}:")
        if self.resource is not None:
            parts.append(f"{self.resource}:")
        if self.field_path:
            parts.append(f"{self.field_path}:")
        parts.append(self.message)
        if self.file is not None:
            parts.append(f"({self.file.path}#{self.file.index})")
        return " ".join(parts)


@dataclass
class Results:
    """Ordered collector of results."""

    items: list[Result] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)

    def add(
        self,
        message: str,
        severity: Severity = "error",
        resource: ResourceRef | None = None,
        field_path: str | None = None,
        file: FileRef | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        """Record one result."""
        self.items.append(
            Result(
                message, severity, resource, field_path, file, tuple(sorted((tags or {}).items()))
            )
        )

    def error(self, message: str, **kw: Any) -> None:
        """Record an error."""
        self.add(message, "error", **kw)

    def warning(self, message: str, **kw: Any) -> None:
        """Record a warning."""
        self.add(message, "warning", **kw)

    def info(self, message: str, **kw: Any) -> None:
        """Record an informational result."""
        self.add(message, "info", **kw)

    @property
    def has_errors(self) -> bool:
        """Whether any error was recorded."""
        return any(r.severity == "error" for r in self.items)

    def redact(self, text: str) -> str:
        """Replace every registered secret in ``text``."""
        for s in self.secrets:
            if s:
                text = text.replace(s, "<redacted>")
        return text

    def safe_items(self) -> list[Result]:
        """Results with secrets scrubbed from their messages."""
        if not self.secrets:
            return list(self.items)
        return [
            Result(self.redact(r.message), r.severity, r.resource, r.field_path, r.file, r.tags)
            for r in self.items
        ]
