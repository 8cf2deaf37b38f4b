"""Catalog validation beyond test_platform_resolve: all problems at once, types, unknown fields.

The checks are hand-written; these pin their messages (the wording users of the former
pydantic model saw) and the template scanner against the regular expression it replaces.
"""

from __future__ import annotations

import re
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krm_fn.platforms import catalog as pcat
from krm_fn.platforms.catalog import CatalogError, parse_catalog, validate_catalog_data


def problems_of(text: str) -> tuple[str, ...]:
    with pytest.raises(CatalogError) as info:
        parse_catalog(textwrap.dedent(text))
    return info.value.problems


def entry_problems(entry: str) -> tuple[str, ...]:
    return problems_of("version: 1\nentries:\n  - " + entry + "\n")


def test_every_problem_of_every_entry_is_reported_at_once() -> None:
    assert problems_of(
        """
        version: 1
        entries:
          - {name: a, source: s, when: {platform: awz, gpuArchitecture: v100}, topologyKey: ''}
          - {name: b, source: s, env: [{name: X, value: 1}, {name: 1X, value: v}], nicsPerNode: -1}
          - {name: a, source: '', mpiArgs: ['{gpuPerNode}'], podAnnotations: {k: 1}}
        """
    ) == (
        "entry 'a' (#0): field 'when.platform': unknown platform 'awz': must be one of aws, "
        "azure, coreweave, forge, gcp, mistral, nscale, oci, onprem, togetherai",
        "entry 'a' (#0): field 'when.gpuArchitecture': unknown GPU architecture 'v100': must be "
        "one of a100, b200, b300, gb200, gb300, h100, h200, l40, l40s, rtxpro6000, unknown",
        "entry 'a' (#0): field 'topologyKey': must not be empty",
        "entry 'b' (#1): field 'env[0].value': Input should be a valid string (got 1; quote "
        "numbers and booleans meant as text)",
        "entry 'b' (#1): field 'env[1].name': invalid environment variable name '1X'",
        "entry 'b' (#1): field 'nicsPerNode': Input should be greater than or equal to 0",
        "entry 'a' (#2): field 'source': source must cite where the values come from",
        "entry 'a' (#2): field 'mpiArgs': unknown template placeholder '{gpuPerNode}' in "
        "'{gpuPerNode}': allowed are {gpusPerNode}, {nicsPerNode}, {enableMNNVL}",
        "entry 'a' (#2): field 'podAnnotations.k': Input should be a valid string (got 1; quote "
        "numbers and booleans meant as text)",
        "entry 'a' (#2): field 'name': duplicate entry name (first used by entry #0)",
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            "version: 1\nentries: []\nentry: []\n",
            "field 'entry': Extra inputs are not permitted",
            id="unknown-top-level-key",
        ),
        pytest.param(
            "version: 1\nentries:\n  - {name: a, source: s, topologyKey: k, tolerance: []}\n",
            "entry 'a' (#0): field 'tolerance': Extra inputs are not permitted",
            id="unknown-entry-field",
        ),
        pytest.param(
            "version: 1\nentries:\n  - {name: a, source: s, when: {platforms: aws}, topologyKey: k}\n",
            "entry 'a' (#0): field 'when.platforms': Extra inputs are not permitted",
            id="unknown-when-key",
        ),
        pytest.param(
            "version: 1\nentries:\n  - {name: a, source: s, env: [{name: A, value: b, from: c}]}\n",
            "entry 'a' (#0): field 'env[0].from': Extra inputs are not permitted",
            id="unknown-env-key",
        ),
        pytest.param(
            "version: 1\nentries:\n  - {name: a, source: s, resources: {limits: {}, claims: []}}\n",
            "entry 'a' (#0): field 'resources.claims': Extra inputs are not permitted",
            id="unknown-resources-section",
        ),
        pytest.param(
            "version: 1\nentries:\n  - {name: a, source: s, env: [{value: b}]}\n",
            "entry 'a' (#0): field 'env[0].name': Field required",
            id="env-without-name",
        ),
    ],
)
def test_unknown_and_missing_fields_are_named(text: str, problem: str) -> None:
    assert problem in problems_of(text)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        pytest.param(
            "{name: a, source: 7, topologyKey: k}",
            "field 'source': Input should be a valid string (got 7; quote numbers and booleans "
            "meant as text)",
            id="number-as-source",
        ),
        pytest.param(
            "{name: a, source: s, inferred: 'yes', topologyKey: k}",
            "field 'inferred': Input should be a valid boolean (got 'yes')",
            id="string-as-boolean",
        ),
        pytest.param(
            "{name: a, source: s, when: null, topologyKey: k}",
            "field 'when': Input should be a valid dictionary",
            id="null-when",
        ),
        pytest.param(
            "{name: a, source: s, when: {platform: 3}, topologyKey: k}",
            "field 'when.platform': Input should be a valid list (got 3)",
            id="number-as-platform",
        ),
        pytest.param(
            "{name: a, source: s, when: {instanceTypes: [p5, 5]}, topologyKey: k}",
            "field 'when.instanceTypes[1]': Input should be a valid string (got 5; quote numbers "
            "and booleans meant as text)",
            id="number-in-instance-types",
        ),
        pytest.param(
            "{name: a, source: s, when: {frameworks: slurm}, topologyKey: k}",
            "field 'when.frameworks[0]': Input should be 'mpi', 'torch' or 'exec' (got 'slurm')",
            id="single-unknown-framework",
        ),
        pytest.param(
            "{name: a, source: s, when: {platform: []}, topologyKey: k}",
            "field 'when.platform': must be a non-empty name or a non-empty list of non-empty names",
            id="empty-platform-list",
        ),
        pytest.param(
            "{name: a, source: s, env: {A: b}}",
            "field 'env': Input should be a valid list (got {'A': 'b'})",
            id="env-as-mapping",
        ),
        pytest.param(
            "{name: a, source: s, env: [A=b]}",
            "field 'env[0]': Input should be a valid dictionary",
            id="env-item-as-string",
        ),
        pytest.param(
            "{name: a, source: s, mpiArgs: '-x A'}",
            "field 'mpiArgs': Input should be a valid list (got '-x A')",
            id="mpi-args-as-string",
        ),
        pytest.param(
            "{name: a, source: s, preCommand: [echo, 1]}",
            "field 'preCommand[1]': Input should be a valid string (got 1; quote numbers and "
            "booleans meant as text)",
            id="number-in-pre-command",
        ),
        pytest.param(
            "{name: a, source: s, resources: {limits: null}}",
            "field 'resources.limits': Input should be a valid dictionary",
            id="null-resources-section",
        ),
        pytest.param(
            "{name: a, source: s, resources: {limits: {cpu: 1.5}}}",
            "field 'resources.limits.cpu': Input should be a valid string or integer (got 1.5)",
            id="float-quantity",
        ),
        pytest.param(
            "{name: a, source: s, resources: {limits: {rdma/ib: -1}}}",
            "field 'resources.limits': rdma/ib: negative quantity -1",
            id="negative-quantity",
        ),
        pytest.param(
            "{name: a, source: s, resources: {limits: {x: '{nicsPerNode|float}'}}}",
            "field 'resources.limits': x: unknown template filter '|float' in "
            "'{nicsPerNode|float}': only '|int' exists",
            id="unknown-template-filter",
        ),
        pytest.param(
            "{name: a, source: s, podAnnotations: {k: '{nics}'}}",
            "field 'podAnnotations': unknown template placeholder '{nics}' in '{nics}': allowed "
            "are {gpusPerNode}, {nicsPerNode}, {enableMNNVL}",
            id="unknown-placeholder-in-annotation",
        ),
        pytest.param(
            "{name: a, source: s, securityContext: [privileged]}",
            "field 'securityContext': Input should be a valid dictionary",
            id="security-context-as-list",
        ),
        pytest.param(
            "{name: a, source: s, tolerations: [{operator: Exists, effect: Never}]}",
            "field 'tolerations': item 0: unknown effect 'Never'",
            id="bad-toleration-effect",
        ),
        pytest.param(
            "{name: a, source: s, tolerations: [key]}",
            "field 'tolerations[0]': Input should be a valid dictionary",
            id="toleration-as-string",
        ),
        pytest.param(
            "{name: a, source: s, volumes: [{name: ''}], volumeMounts: []}",
            "field 'volumes': item 0 of volumes needs a non-empty string 'name'",
            id="volume-with-empty-name",
        ),
        pytest.param(
            "{name: a, source: s, gpusPerNode: 0}",
            "field 'gpusPerNode': Input should be greater than or equal to 1",
            id="zero-gpus",
        ),
        pytest.param(
            "{name: a, source: s, nicsPerNode: true}",
            "field 'nicsPerNode': Input should be a valid integer (got True)",
            id="boolean-is-not-an-integer",
        ),
        pytest.param(
            "{name: a-, source: s, topologyKey: k}",
            "field 'name': invalid entry name 'a-': use lower-case letters, digits, '-'",
            id="entry-name-ending-in-dash",
        ),
        pytest.param(
            "{name: " + "a" * 64 + ", source: s, topologyKey: k}",
            "field 'name': invalid entry name '" + "a" * 64 + "': use lower-case letters, "
            "digits, '-'",
            id="entry-name-over-63-characters",
        ),
    ],
)
def test_wrong_types_and_values_are_named(entry: str, problem: str) -> None:
    problems = entry_problems(entry)
    assert any(p.split(": ", 1)[1] == problem for p in problems), problems


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        pytest.param(
            "version: '1'\nentries: []\n",
            ["field 'version': Input should be 1 (got '1')"],
            id="version-as-string",
        ),
        pytest.param(
            "version: 1\nentries: {a: 1}\n",
            ["field 'entries': Input should be a valid list (got {'a': 1})"],
            id="entries-as-mapping",
        ),
        pytest.param("entries: []\n", ["field 'version': Field required"], id="missing-version"),
        pytest.param(
            "version: 1\nentries: [5]\n",
            ["entry #0: Input should be a valid dictionary"],
            id="entry-as-number",
        ),
    ],
)
def test_document_problems(text: str, problems: list[str]) -> None:
    assert list(problems_of(text)) == problems


def test_cross_field_checks_wait_for_valid_fields() -> None:
    """A misspelt setting is reported once, not again as "entry sets nothing"."""
    assert entry_problems("{name: a, source: s, topologykey: k}") == (
        "entry 'a' (#0): field 'topologykey': Extra inputs are not permitted",
    )


def test_every_mount_without_a_volume_is_named() -> None:
    assert entry_problems(
        "{name: a, source: s, volumes: [{name: v}], "
        "volumeMounts: [{name: x, mountPath: /x}, {name: y, mountPath: /y}]}"
    ) == (
        "entry 'a' (#0): field 'volumeMounts': mount 'x' names no volume of this entry",
        "entry 'a' (#0): field 'volumeMounts': mount 'y' names no volume of this entry",
    )


def test_a_valid_document_has_no_problems() -> None:
    assert validate_catalog_data({"version": 1, "entries": []}) == []
    assert validate_catalog_data([]) == [
        "the document must be a mapping with 'version' and 'entries'"
    ]


# --------------------------------------------------------------------------- templates

_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z][A-Za-z0-9_]*)(\|[A-Za-z]+)?\}")
_TEMPLATE_TEXT = st.text(alphabet="{}$|_aAzZ09-é ", max_size=24) | st.sampled_from(
    ["{gpusPerNode}", "${nicsPerNode}", "{nicsPerNode|int}", "x{a|}", "{{gpusPerNode}}"]
)


@given(_TEMPLATE_TEXT)
def test_placeholder_scanner_matches_the_regular_expression(text: str) -> None:
    expected = [(m.start(), m.end(), m.group(1), m.group(2)) for m in _PLACEHOLDER.finditer(text)]
    assert pcat._placeholders(text) == expected


@given(_TEMPLATE_TEXT)
def test_rendering_matches_the_regular_expression(text: str) -> None:
    variables: dict[str, int] = {}
    for m in _PLACEHOLDER.finditer(text):
        variables.setdefault(m.group(1), len(variables) + 2)
    expected = _PLACEHOLDER.sub(lambda m: str(variables[m.group(1)]), text)
    assert pcat._render(text, variables) == expected
