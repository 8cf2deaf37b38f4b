"""The one collector every stage of a run reports through (passed explicitly, never global).

Invariants:
    * Every result names the run (its reference and file); a stage only adds, never removes.
    * :attr:`RunDiagnostics.failed` is true once the run has an error, counting errors found
      before the run's stages started (a bad ``when`` found while parsing), so the pipeline
      stops before building anything for a run that cannot be rendered.
"""

from __future__ import annotations

from dataclasses import dataclass

from krm_fn.io.results import FileRef, ResourceRef, Results


@dataclass
class RunDiagnostics:
    """Errors, warnings and notes of one run, recorded into the whole render's results."""

    results: Results
    ref: ResourceRef  # put on every result
    file: FileRef | None
    errors: int = 0  # recorded for this run so far

    @property
    def failed(self) -> bool:
        """Whether the run has an error."""
        return self.errors > 0

    def error(self, msg: str, path: str | None = None, **tags: str) -> None:
        """Record an error at ``path`` (a field path of the run)."""
        self.errors += 1
        self.results.error(msg, resource=self.ref, field_path=path, file=self.file, tags=tags)

    def warning(self, msg: str, path: str | None = None) -> None:
        """Record a warning at ``path``."""
        self.results.warning(msg, resource=self.ref, field_path=path, file=self.file)

    def build_failed(self, msg: str, path: str) -> None:
        """Record an error of a rule Trainer or the cluster would refuse (tagged BuildFailed)."""
        self.error(msg, path, reason="BuildFailed")

    def info(self, msg: str) -> None:
        """Record a note (no field path)."""
        self.results.info(msg, resource=self.ref, file=self.file)
