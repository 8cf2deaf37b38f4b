"""The catalog FILE schema (krm_fn/platforms/catalog_file.py): every message an author can see.

Each problem is one line naming the entry (by name where it has one, always by number), the
field path, the bad value and what is allowed; every problem of a file is reported at once.
The tables pin each message exactly: a reworded or lost check fails here. The template
scanner is checked against the regular expression it replaces.
"""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn.platforms.catalog import CatalogError, parse_catalog
from krm_fn.platforms.templates import render, render_resource


def problems_of(text: str) -> tuple[str, ...]:
    with pytest.raises(CatalogError) as info:
        parse_catalog(textwrap.dedent(text), "bad.yaml")
    assert str(info.value).startswith("invalid platform catalog bad.yaml:\n  ")
    return info.value.problems


def entry_problems(entry: str) -> tuple[str, ...]:
    return problems_of("version: 1\nentries:\n  - " + entry + "\n")


ENTRY_PROBLEMS = [
    pytest.param(
        "{name: a, source: s, topologyKey: k, tolerance: []}",
        (
            "entry 'a' (#0): field 'tolerance': unknown field 'tolerance': did you mean 'tolerations'?",
        ),
        id="unknown-entry-field-gets-a-suggestion",
    ),
    pytest.param(
        "{name: a, source: s, topologyKey: k, zzz: 1}",
        (
            "entry 'a' (#0): field 'zzz': unknown field 'zzz': allowed are name, source, inferred, when, env, forwardEnv, mpiArgs, resources, nicResourceName, volumes, volumeMounts, securityContext, tolerations, podAnnotations, topologyKey, preCommand, gpusPerNode, nicsPerNode, trainerEnv, computeDomain, claimTemplates",
        ),
        id="unknown-entry-field-lists-the-fields",
    ),
    pytest.param(
        "{name: a, source: s, when: {platforms: aws}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.platforms': unknown field 'platforms': did you mean 'platform'?",
        ),
        id="unknown-when-key",
    ),
    pytest.param(
        "{name: a, source: s, env: [{name: A, value: b, from: c}]}",
        (
            "entry 'a' (#0): field 'env[0].from': unknown field 'from': allowed are name, value, whenGpusPerNode",
        ),
        id="unknown-env-key",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: {}, claims: []}}",
        (
            "entry 'a' (#0): field 'resources.claims': unknown field 'claims': did you mean 'limits'?",
        ),
        id="unknown-resources-section",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limit: {rdma/ib: 1}}}",
        ("entry 'a' (#0): field 'resources.limit': unknown field 'limit': did you mean 'limits'?",),
        id="misspelt-resources-section",
    ),
    pytest.param(
        "{name: a, source: s, securityContext: {privilegd: true}}",
        (
            "entry 'a' (#0): field 'securityContext.privilegd': unknown field 'privilegd': did you mean 'privileged'?",
        ),
        id="unknown-security-context-field",
    ),
    pytest.param(
        "{name: a, source: s, securityContext: {capabilities: {dorp: [ALL]}}}",
        (
            "entry 'a' (#0): field 'securityContext.capabilities.dorp': unknown field 'dorp': did you mean 'drop'?",
        ),
        id="unknown-capability-list",
    ),
    pytest.param(
        "{name: a, source: s, tolerations: [{key: a, tolerationSecond: 1}]}",
        (
            "entry 'a' (#0): field 'tolerations[0].tolerationSecond': unknown field 'tolerationSecond': did you mean 'tolerationSeconds'?",
        ),
        id="unknown-toleration-field",
    ),
    pytest.param(
        "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x, deviceClassName: c.example.com, count: 1, size: 2}]}",
        (
            "entry 'a' (#0): field 'claimTemplates[0].size': unknown field 'size': allowed are claim, suffix, request, deviceClassName, count",
        ),
        id="unknown-claim-template-field",
    ),
    pytest.param(
        "{name: a, source: s, env: [{value: b}]}",
        ("entry 'a' (#0): field 'env[0].name': required field is missing",),
        id="env-without-name",
    ),
    pytest.param(
        "{name: a, topologyKey: k}",
        ("entry 'a' (#0): field 'source': required field is missing",),
        id="missing-source",
    ),
    pytest.param(
        "{name: a, source: s, volumes: [{name: v}], volumeMounts: [{name: v}]}",
        ("entry 'a' (#0): field 'volumeMounts[0].mountPath': required field is missing",),
        id="mount-without-mount-path",
    ),
    pytest.param(
        "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x, deviceClassName: c.example.com}]}",
        ("entry 'a' (#0): field 'claimTemplates[0].count': required field is missing",),
        id="claim-template-without-count",
    ),
    pytest.param(
        "{name: a, source: 7, topologyKey: k}",
        ("entry 'a' (#0): field 'source': Input should be a valid string; got int 7",),
        id="number-as-source",
    ),
    pytest.param(
        "{name: a, source: '  ', topologyKey: k}",
        ("entry 'a' (#0): field 'source': source must cite where the values come from",),
        id="blank-source",
    ),
    pytest.param(
        "{name: a, source: s, inferred: 'yes', topologyKey: k}",
        ("entry 'a' (#0): field 'inferred': Input should be a valid boolean; got str 'yes'",),
        id="string-as-boolean",
    ),
    pytest.param(
        "{name: a, source: s, when: null, topologyKey: k}",
        ("entry 'a' (#0): field 'when': Input should be a valid dictionary; got NoneType None",),
        id="null-when",
    ),
    pytest.param(
        "{name: a, source: s, when: {platform: 3}, topologyKey: k}",
        ("entry 'a' (#0): field 'when.platform': Input should be a valid list; got int 3",),
        id="number-as-platform",
    ),
    pytest.param(
        "{name: a, source: s, when: {platform: awz}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.platform': unknown platform 'awz': must be one of aws, azure, coreweave, forge, gcp, mistral, nscale, oci, onprem, togetherai",
        ),
        id="unknown-platform",
    ),
    pytest.param(
        "{name: a, source: s, when: {platform: [aws, awz, gce]}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.platform': unknown platform 'awz', 'gce': must be one of aws, azure, coreweave, forge, gcp, mistral, nscale, oci, onprem, togetherai",
        ),
        id="unknown-platforms-in-a-list",
    ),
    pytest.param(
        "{name: a, source: s, when: {gpuArchitecture: [h100, v100]}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.gpuArchitecture': unknown GPU architecture 'v100': must be one of a100, b200, b300, gb200, gb300, h100, h200, l40, l40s, rtxpro6000, unknown",
        ),
        id="unknown-gpu-architecture",
    ),
    pytest.param(
        "{name: a, source: s, when: {instanceTypes: [p5, 5]}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.instanceTypes[1]': Input should be a valid string; got int 5",
        ),
        id="number-in-instance-types",
    ),
    pytest.param(
        "{name: a, source: s, when: {frameworks: slurm}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.frameworks[0]': value 'slurm' is not allowed; expected 'mpi', 'torch' or 'exec'",
        ),
        id="single-unknown-framework",
    ),
    pytest.param(
        "{name: a, source: s, when: {platform: []}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.platform': must be a non-empty name or a non-empty list of non-empty names",
        ),
        id="empty-platform-list",
    ),
    pytest.param(
        "{name: a, source: s, when: {frameworks: []}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.frameworks': must be a non-empty name or a non-empty list of non-empty names",
        ),
        id="empty-framework-list",
    ),
    pytest.param(
        "{name: a, source: s, when: {instanceTypes: ''}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.instanceTypes': must be a non-empty name or a non-empty list of non-empty names",
        ),
        id="empty-instance-type",
    ),
    pytest.param(
        "{name: a, source: s, when: {instanceTypes: [p5], defaultShape: 'yes'}, topologyKey: k}",
        (
            "entry 'a' (#0): field 'when.defaultShape': Input should be a valid boolean; got str 'yes'",
        ),
        id="string-as-default-shape",
    ),
    pytest.param(
        "{name: a, source: s, when: {defaultShape: true}, topologyKey: k}",
        ("entry 'a' (#0): field 'when': defaultShape needs instanceTypes or gkeAccelerator",),
        id="default-shape-without-shape",
    ),
    pytest.param(
        "{name: a, source: s, env: {A: b}}",
        ("entry 'a' (#0): field 'env': Input should be a valid list; got dict {'A': 'b'}",),
        id="env-as-mapping",
    ),
    pytest.param(
        "{name: a, source: s, env: [A=b]}",
        ("entry 'a' (#0): field 'env[0]': Input should be a valid dictionary; got str 'A=b'",),
        id="env-item-as-string",
    ),
    pytest.param(
        "{name: a, source: s, env: [{name: X, value: 1}]}",
        ("entry 'a' (#0): field 'env[0].value': Input should be a valid string; got int 1",),
        id="unquoted-env-value",
    ),
    pytest.param(
        "{name: a, source: s, env: [{name: 1X, value: v}]}",
        (
            "entry 'a' (#0): field 'env[0].name': invalid environment variable name '1X': use letters, digits and '_', not starting with a digit",
        ),
        id="env-name-starting-with-a-digit",
    ),
    pytest.param(
        "{name: a, source: s, forwardEnv: [{name: X-Y, value: a}]}",
        (
            "entry 'a' (#0): field 'forwardEnv[0].name': invalid environment variable name 'X-Y': use letters, digits and '_', not starting with a digit",
        ),
        id="env-name-with-a-dash",
    ),
    pytest.param(
        "{name: a, source: s, env: [{name: X, value: a}, {name: X, value: b}]}",
        (
            "entry 'a' (#0): field 'env': X is set twice: set a name once, or limit each setting with whenGpusPerNode",
        ),
        id="env-name-set-twice",
    ),
    pytest.param(
        "{name: a, source: s, trainerEnv: [{name: X, value: a}, {name: Y, value: a}, {name: X, value: b}, {name: Y, value: b}]}",
        (
            "entry 'a' (#0): field 'trainerEnv': X, Y are set twice: set a name once, or limit each setting with whenGpusPerNode",
        ),
        id="env-names-set-twice-in-trainer-env",
    ),
    pytest.param(
        "{name: a, source: s, env: [{name: X, value: v, whenGpusPerNode: [0]}]}",
        (
            "entry 'a' (#0): field 'env[0].whenGpusPerNode[0]': Input should be greater than or equal to 1; got int 0",
        ),
        id="zero-gpus-in-env-condition",
    ),
    pytest.param(
        "{name: a, source: s, env: [{name: X, value: '{nicsPerNode|int}'}]}",
        (
            "entry 'a' (#0): field 'env[0].value': '{nicsPerNode|int}': the '|int' filter is only allowed as a whole resources value, e.g. '{nicsPerNode|int}'",
        ),
        id="int-filter-outside-resources",
    ),
    pytest.param(
        "{name: a, source: s, mpiArgs: '-x A'}",
        ("entry 'a' (#0): field 'mpiArgs': Input should be a valid list; got str '-x A'",),
        id="mpi-args-as-string",
    ),
    pytest.param(
        "{name: a, source: s, mpiArgs: ['-x', 'N={gpuPerNode}']}",
        (
            "entry 'a' (#0): field 'mpiArgs[1]': unknown template placeholder '{gpuPerNode}' in 'N={gpuPerNode}': allowed are {gpusPerNode}, {nicsPerNode}, {enableMNNVL}",
        ),
        id="misspelt-placeholder-in-mpi-args",
    ),
    pytest.param(
        "{name: a, source: s, preCommand: [echo, 1]}",
        ("entry 'a' (#0): field 'preCommand[1]': Input should be a valid string; got int 1",),
        id="number-in-pre-command",
    ),
    pytest.param(
        "{name: a, source: s, preCommand: ['echo {nodes}']}",
        (
            "entry 'a' (#0): field 'preCommand[0]': unknown template placeholder '{nodes}' in 'echo {nodes}': allowed are {gpusPerNode}, {nicsPerNode}, {enableMNNVL}",
        ),
        id="unknown-placeholder-in-pre-command",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: null}}",
        (
            "entry 'a' (#0): field 'resources.limits': Input should be a valid dictionary; got NoneType None",
        ),
        id="null-resources-section",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: {cpu: 1.5}}}",
        (
            "entry 'a' (#0): field 'resources.limits.cpu': a quantity is a string, an integer or null (delete the name); got float 1.5",
        ),
        id="float-quantity",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: {rdma/ib: true}}}",
        (
            "entry 'a' (#0): field 'resources.limits.rdma/ib': a quantity is a string, an integer or null (delete the name); got bool True",
        ),
        id="boolean-quantity",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: {rdma/ib: -1}}}",
        (
            "entry 'a' (#0): field 'resources.limits.rdma/ib': negative quantity -1: a quantity is >= 0",
        ),
        id="negative-quantity",
    ),
    pytest.param(
        "{name: a, source: s, resources: {requests: {rdma/ib: ''}}}",
        (
            "entry 'a' (#0): field 'resources.requests.rdma/ib': empty quantity: use a quantity such as '1' or '2Gi'",
        ),
        id="empty-quantity",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: {'': 1}}}",
        (
            "entry 'a' (#0): field 'resources.limits': key '': String should have at least 1 character; got str ''",
        ),
        id="empty-resource-name",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: {1: 1}}}",
        (
            "entry 'a' (#0): field 'resources.limits': key 1: Input should be a valid string; got int 1",
        ),
        id="number-as-resource-name",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: {x: '{nicsPerNode|float}'}}}",
        (
            "entry 'a' (#0): field 'resources.limits.x': unknown template filter '|float' in '{nicsPerNode|float}': only '|int' exists",
        ),
        id="unknown-template-filter",
    ),
    pytest.param(
        "{name: a, source: s, resources: {limits: {rdma/ib: 'x{nicsPerNode|int}'}}}",
        (
            "entry 'a' (#0): field 'resources.limits.rdma/ib': 'x{nicsPerNode|int}': the '|int' filter is only allowed as a whole resources value, e.g. '{nicsPerNode|int}'",
        ),
        id="int-filter-not-the-whole-value",
    ),
    pytest.param(
        "{name: a, source: s, nicResourceName: ''}",
        ("entry 'a' (#0): field 'nicResourceName': must not be empty",),
        id="empty-nic-resource-name",
    ),
    pytest.param(
        "{name: a, source: s, topologyKey: ' '}",
        ("entry 'a' (#0): field 'topologyKey': must not be empty",),
        id="empty-topology-key",
    ),
    pytest.param(
        "{name: a, source: s, volumes: [{name: ''}], volumeMounts: []}",
        (
            "entry 'a' (#0): field 'volumes[0].name': String should have at least 1 character; got str ''",
        ),
        id="volume-with-empty-name",
    ),
    pytest.param(
        "{name: a, source: s, volumes: [{name: v, 1: x}], volumeMounts: []}",
        ("entry 'a' (#0): field 'volumes[0][1]': Keys should be strings; got int 1",),
        id="volume-with-a-number-key",
    ),
    pytest.param(
        "{name: a, source: s, volumeMounts: [{name: v, mountPath: /v}]}",
        ("entry 'a' (#0): field 'volumes' and field 'volumeMounts' must be set together",),
        id="mount-without-volume",
    ),
    pytest.param(
        "{name: a, source: s, volumes: [{name: v}]}",
        ("entry 'a' (#0): field 'volumes' and field 'volumeMounts' must be set together",),
        id="volume-without-mount",
    ),
    pytest.param(
        "{name: a, source: s, volumes: [{name: v}], volumeMounts: [{name: x, mountPath: /x}, {name: y, mountPath: /y}]}",
        (
            "entry 'a' (#0): field 'volumeMounts': mount(s) 'x', 'y' name no volume of this entry (its volumes: v)",
        ),
        id="mounts-naming-no-volume",
    ),
    pytest.param(
        "{name: a, source: s, securityContext: [privileged]}",
        (
            "entry 'a' (#0): field 'securityContext': Input should be a valid dictionary; got list ['privileged']",
        ),
        id="security-context-as-list",
    ),
    pytest.param(
        "{name: a, source: s, securityContext: {privileged: 'true'}}",
        (
            "entry 'a' (#0): field 'securityContext.privileged': Input should be a valid boolean; got str 'true'",
        ),
        id="string-as-privileged",
    ),
    pytest.param(
        "{name: a, source: s, securityContext: {runAsUser: -1}}",
        (
            "entry 'a' (#0): field 'securityContext.runAsUser': Input should be greater than or equal to 0; got int -1",
        ),
        id="negative-run-as-user",
    ),
    pytest.param(
        "{name: a, source: s, tolerations: [key]}",
        (
            "entry 'a' (#0): field 'tolerations[0]': Input should be a valid dictionary; got str 'key'",
        ),
        id="toleration-as-string",
    ),
    pytest.param(
        "{name: a, source: s, tolerations: [{key: a, operator: Equals}]}",
        (
            "entry 'a' (#0): field 'tolerations[0].operator': value 'Equals' is not allowed; expected 'Equal' or 'Exists'",
        ),
        id="bad-toleration-operator",
    ),
    pytest.param(
        "{name: a, source: s, tolerations: [{operator: Exists, effect: Never}]}",
        (
            "entry 'a' (#0): field 'tolerations[0].effect': value 'Never' is not allowed; expected 'NoSchedule', 'PreferNoSchedule' or 'NoExecute'",
        ),
        id="bad-toleration-effect",
    ),
    pytest.param(
        "{name: a, source: s, podAnnotations: {k: 1}}",
        ("entry 'a' (#0): field 'podAnnotations.k': Input should be a valid string; got int 1",),
        id="number-as-annotation-value",
    ),
    pytest.param(
        "{name: a, source: s, podAnnotations: {k: '{nics}'}}",
        (
            "entry 'a' (#0): field 'podAnnotations.k': unknown template placeholder '{nics}' in '{nics}': allowed are {gpusPerNode}, {nicsPerNode}, {enableMNNVL}",
        ),
        id="unknown-placeholder-in-annotation",
    ),
    pytest.param(
        "{name: a, source: s, gpusPerNode: 0}",
        (
            "entry 'a' (#0): field 'gpusPerNode': Input should be greater than or equal to 1; got int 0",
        ),
        id="zero-gpus",
    ),
    pytest.param(
        "{name: a, source: s, gpusPerNode: '8'}",
        ("entry 'a' (#0): field 'gpusPerNode': Input should be a valid integer; got str '8'",),
        id="string-gpus",
    ),
    pytest.param(
        "{name: a, source: s, nicsPerNode: -1}",
        (
            "entry 'a' (#0): field 'nicsPerNode': Input should be greater than or equal to 0; got int -1",
        ),
        id="negative-nics",
    ),
    pytest.param(
        "{name: a, source: s, nicsPerNode: true}",
        ("entry 'a' (#0): field 'nicsPerNode': Input should be a valid integer; got bool True",),
        id="boolean-is-not-an-integer",
    ),
    pytest.param(
        "{name: a, source: s, computeDomain: false}",
        (
            "entry 'a' (#0): field 'computeDomain': false sets nothing: set it to true or leave it out",
        ),
        id="compute-domain-false",
    ),
    pytest.param(
        "{name: a, source: s, claimTemplates: [{claim: Gpu, suffix: x, request: x, deviceClassName: c.example.com, count: 1}]}",
        (
            "entry 'a' (#0): field 'claimTemplates[0].claim': 'Gpu' is not a DNS label: use at most 63 lower-case letters, digits or '-', not starting or ending with '-'",
        ),
        id="claim-name-not-a-dns-label",
    ),
    pytest.param(
        "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x, deviceClassName: Bad_Class, count: 1}]}",
        (
            "entry 'a' (#0): field 'claimTemplates[0].deviceClassName': 'Bad_Class' is not a DNS subdomain: use DNS labels (at most 63 lower-case letters, digits or '-', not starting or ending with '-') joined by '.'",
        ),
        id="device-class-not-a-dns-subdomain",
    ),
    pytest.param(
        "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x, deviceClassName: c.example.com, count: 0}]}",
        (
            "entry 'a' (#0): field 'claimTemplates[0].count': count 0 is below 1: use an integer >= 1",
        ),
        id="zero-claim-count",
    ),
    pytest.param(
        "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x, deviceClassName: c.example.com, count: '{gpusPerNode}'}]}",
        (
            "entry 'a' (#0): field 'claimTemplates[0].count': count '{gpusPerNode}': use an integer >= 1, '{gpusPerNode|int}' or '{nicsPerNode|int}'",
        ),
        id="claim-count-without-int-filter",
    ),
    pytest.param(
        "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x, deviceClassName: c.example.com, count: '{gpus|int}'}]}",
        (
            "entry 'a' (#0): field 'claimTemplates[0].count': unknown template placeholder '{gpus|int}' in '{gpus|int}': allowed are {gpusPerNode}, {nicsPerNode}, {enableMNNVL}",
        ),
        id="claim-count-unknown-placeholder",
    ),
    pytest.param(
        "{name: a, source: s, claimTemplates: [{claim: x, suffix: x, request: x, deviceClassName: c.example.com, count: true}]}",
        (
            "entry 'a' (#0): field 'claimTemplates[0].count': count True: use an integer >= 1, '{gpusPerNode|int}' or '{nicsPerNode|int}'",
        ),
        id="claim-count-as-boolean",
    ),
    pytest.param(
        "{name: a, source: s, when: {platform: aws}}",
        (
            "entry 'a' (#0): entry sets nothing: give it at least one of env, forwardEnv, mpiArgs, resources, nicResourceName, volumes, volumeMounts, securityContext, tolerations, podAnnotations, topologyKey, preCommand, gpusPerNode, nicsPerNode, trainerEnv, computeDomain, claimTemplates",
        ),
        id="entry-sets-nothing",
    ),
    pytest.param(
        "{name: a-, source: s, topologyKey: k}",
        (
            "entry 'a-' (#0): field 'name': invalid entry name 'a-': use at most 63 lower-case letters, digits or '-', not starting or ending with '-'",
        ),
        id="entry-name-ending-in-dash",
    ),
    pytest.param(
        "{name: Bad_Name, source: s, topologyKey: k}",
        (
            "entry 'Bad_Name' (#0): field 'name': invalid entry name 'Bad_Name': use at most 63 lower-case letters, digits or '-', not starting or ending with '-'",
        ),
        id="entry-name-with-capitals",
    ),
    pytest.param(
        "{name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, source: s, topologyKey: k}",
        (
            "entry 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' (#0): field 'name': invalid entry name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': use at most 63 lower-case letters, digits or '-', not starting or ending with '-'",
        ),
        id="entry-name-over-63-characters",
    ),
    pytest.param(
        "{source: s, topologyKey: k}",
        ("entry #0: field 'name': required field is missing",),
        id="unnamed-entry-is-numbered",
    ),
    pytest.param(
        "{name: 5, source: s, topologyKey: k}",
        ("entry #0: field 'name': Input should be a valid string; got int 5",),
        id="number-as-entry-name",
    ),
]


@pytest.mark.parametrize(("entry", "problems"), ENTRY_PROBLEMS)
def test_a_bad_entry_is_reported_with_its_name_field_value_and_what_is_allowed(
    entry: str, problems: tuple[str, ...]
) -> None:
    assert entry_problems(entry) == problems


DOCUMENT_PROBLEMS = [
    pytest.param(
        "version: 1\nentries: []\nentry: []\n",
        ["field 'entry': unknown field 'entry': did you mean 'entries'?"],
        id="unknown-top-level-key",
    ),
    pytest.param(
        "version: '1'\nentries: []\n",
        ["field 'version': value '1' is not allowed; expected 1"],
        id="version-as-string",
    ),
    pytest.param(
        "version: 2\nentries: []\n",
        ["field 'version': value 2 is not allowed; expected 1"],
        id="version-2",
    ),
    pytest.param(
        "version: true\nentries: []\n",
        ["field 'version': value True is not allowed; expected 1"],
        id="version-as-boolean",
    ),
    pytest.param(
        "version: 1\nentries: {a: 1}\n",
        ["field 'entries': Input should be a valid list; got dict {'a': 1}"],
        id="entries-as-mapping",
    ),
    pytest.param(
        "entries: []\n",
        ["field 'version': required field is missing"],
        id="missing-version",
    ),
    pytest.param(
        "version: 1\nplatforms: {a: 1}\n",
        ["field 'platforms': Input should be a valid list; got dict {'a': 1}"],
        id="platforms-not-a-list",
    ),
    pytest.param(
        "version: 1\nentries: [5]\n",
        ["entry #0: Input should be a valid dictionary; got int 5"],
        id="entry-as-number",
    ),
    pytest.param(
        "- a\n- b\n",
        ["the document must be a mapping with 'version' and 'entries' or 'platforms'"],
        id="document-as-list",
    ),
    pytest.param(
        "",
        ["the document must be a mapping with 'version' and 'entries' or 'platforms'"],
        id="empty-document",
    ),
]


@pytest.mark.parametrize(("text", "problems"), DOCUMENT_PROBLEMS)
def test_a_bad_document_is_reported_with_the_field_and_what_is_allowed(
    text: str, problems: list[str]
) -> None:
    assert list(problems_of(text)) == problems


def test_malformed_yaml_is_reported_with_the_parser_position() -> None:
    (problem,) = problems_of("entries: [")
    assert problem.startswith("not valid YAML: while parsing a flow node")
    assert "line 2, column 1" in problem


def test_every_problem_of_every_entry_is_reported_at_once_in_entry_order() -> None:
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
        "entry 'b' (#1): field 'env[0].value': Input should be a valid string; got int 1",
        "entry 'b' (#1): field 'env[1].name': invalid environment variable name '1X': use "
        "letters, digits and '_', not starting with a digit",
        "entry 'b' (#1): field 'nicsPerNode': Input should be greater than or equal to 0; "
        "got int -1",
        "entry 'a' (#2): field 'source': source must cite where the values come from",
        "entry 'a' (#2): field 'mpiArgs[0]': unknown template placeholder '{gpuPerNode}' in "
        "'{gpuPerNode}': allowed are {gpusPerNode}, {nicsPerNode}, {enableMNNVL}",
        "entry 'a' (#2): field 'podAnnotations.k': Input should be a valid string; got int 1",
        "entry 'a' (#2): field 'name': duplicate entry name 'a' (first used by entry #0)",
    )


def test_a_duplicate_name_is_reported_even_when_the_entries_are_valid() -> None:
    assert problems_of(
        """
        version: 1
        entries:
          - {name: a, source: s, topologyKey: k}
          - {name: b, source: s, topologyKey: k}
          - {name: a, source: s, topologyKey: k}
          - {name: a, source: s, topologyKey: k}
        """
    ) == (
        "entry 'a' (#2): field 'name': duplicate entry name 'a' (first used by entry #0)",
        "entry 'a' (#3): field 'name': duplicate entry name 'a' (first used by entry #0)",
    )


def test_the_other_problems_of_the_document_come_with_a_duplicate_name() -> None:
    assert problems_of(
        "version: 2\nentries:\n  - {name: a, source: s, topologyKey: k}\n"
        "  - {name: a, source: s, topologyKey: k}\n"
    ) == (
        "field 'version': value 2 is not allowed; expected 1",
        "entry 'a' (#1): field 'name': duplicate entry name 'a' (first used by entry #0)",
    )


def test_cross_field_checks_wait_for_valid_fields() -> None:
    """A misspelt setting is reported once, not again as "entry sets nothing"."""
    assert entry_problems("{name: a, source: s, topologykey: k}") == (
        "entry 'a' (#0): field 'topologykey': unknown field 'topologykey': did you mean "
        "'topologyKey'?",
    )


def test_the_cross_field_problems_of_an_entry_are_reported_together() -> None:
    assert entry_problems(
        "{name: a, source: s, volumes: [{name: v}], volumeMounts: [{name: x, mountPath: /x}], "
        "computeDomain: true}"
    ) == (
        "entry 'a' (#0): field 'volumeMounts': mount(s) 'x' name no volume of this entry "
        "(its volumes: v)",
    )


def validate_catalog_data(document: Any) -> list[str]:
    """Every problem of a site catalog document (empty: valid)."""
    try:
        parse_catalog(yaml.safe_dump(document))
    except CatalogError as exc:
        return list(exc.problems)
    return []


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("{name: a, source: s, topologyKey: k}", id="one-setting"),
        pytest.param(
            "{name: a, source: s, env: [{name: X, value: a, whenGpusPerNode: [8]}, "
            "{name: X, value: b, whenGpusPerNode: [2, 4]}]}",
            id="a-name-twice-under-gpu-count-conditions",
        ),
        pytest.param(
            "{name: a, source: s, when: {platform: aws, frameworks: mpi, instanceTypes: p5.48xlarge, "
            "defaultShape: true}, topologyKey: k}",
            id="single-names-in-when",
        ),
        pytest.param(
            "{name: a, source: s, resources: {limits: {nvidia.com/gpu: null, x: '{nicsPerNode|int}', "
            "y: 2, z: 'n{gpusPerNode}'}}}",
            id="null-integer-and-templated-quantities",
        ),
        pytest.param(
            "{name: a, source: s, volumes: [{name: v, hostPath: {path: /dev/infiniband}}], "
            "volumeMounts: [{name: v, mountPath: /dev/infiniband, readOnly: true}]}",
            id="volume-source-and-mount-options-pass-through",
        ),
        pytest.param(
            "{name: a, source: s, preCommand: ['export P=\"/x${P:+:${P}}\"', 'echo {a,b}']}",
            id="shell-syntax-is-not-a-template",
        ),
        pytest.param(
            "{name: a, source: s, claimTemplates: [{claim: gpu, suffix: gpu, request: gpu, "
            "deviceClassName: gpu.nvidia.com, count: '{gpusPerNode|int}'}]}",
            id="claim-count-template",
        ),
    ],
)
def test_valid_entries_are_accepted(entry: str) -> None:
    text = "version: 1\nentries:\n  - " + entry + "\n"
    assert validate_catalog_data(yaml.safe_load(text)) == []
    assert parse_catalog(text).names == ("a",)


_BUNDLED: dict[str, Any] = yaml.safe_load(
    Path("krm_fn/data/platforms.yaml").read_text(encoding="utf-8")
    if Path("krm_fn/data/platforms.yaml").exists()
    else Path(__file__).resolve().parents[2].joinpath("krm_fn/data/platforms.yaml").read_text()
)
_KEEP = {"name", "source", "inferred", "when"}
_ENTRIES = [((), i) for i in range(len(_BUNDLED["entries"]))] + [
    ((j,), i) for j, p in enumerate(_BUNDLED["platforms"]) for i in range(len(p.get("entries", [])))
]


def _label(document: Any, where: tuple[int, ...], entry: Any, index: int) -> str:
    name = entry.get("name")
    label = f"entry {name!r} (#{index})" if isinstance(name, str) else f"entry #{index}"
    if where:
        platform = document["platforms"][where[0]]
        label = f"platform {platform['name']!r} (#{where[0]}): {label}"
    return label


@settings(max_examples=40, deadline=None)
@given(at=st.sampled_from(_ENTRIES), name=st.sampled_from(["keep", "7"]))
def test_every_broken_setting_of_a_bundled_entry_is_reported_naming_that_entry(
    at: tuple[tuple[int, ...], int], name: str
) -> None:
    """Each setting of one real entry replaced by a float: one problem per setting, all at
    once, each naming the entry (by its name, or its number when the name is broken too)
    and, for a platform's entry, the platform."""
    where, index = at
    document = copy.deepcopy(_BUNDLED)
    owner = document["platforms"][where[0]] if where else document
    entry = owner["entries"][index]
    settings_of_entry = sorted(key for key in entry if key not in _KEEP)
    for key in settings_of_entry:
        entry[key] = 1.5
    if name == "7":
        entry["name"] = 7
    problems = validate_catalog_data(document)
    label = _label(document, where, entry, index)
    assert all(p.startswith(label + ": field '") for p in problems), problems
    fields = sorted(p.removeprefix(label + ": field '").split("'", 1)[0] for p in problems)
    assert fields == sorted([*settings_of_entry, *(["name"] if name == "7" else [])])


def test_a_valid_document_has_no_problems() -> None:
    assert validate_catalog_data({"version": 1, "entries": []}) == []


# --------------------------------------------------------------------------- templates


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        pytest.param("a-{gpusPerNode}-{nicsPerNode}", "a-8-4", id="names-are-substituted"),
        pytest.param("${nicsPerNode}", "${nicsPerNode}", id="shell-variable-is-not-a-template"),
        pytest.param("{a,b}", "{a,b}", id="brace-expansion-is-not-a-template"),
        pytest.param("{{gpusPerNode}}", "{8}", id="doubled-braces-keep-the-outer-pair"),
        pytest.param("x{a|}", "x{a|}", id="empty-filter-is-not-a-template"),
        pytest.param("{enableMNNVL}", "1", id="mnnvl-renders-one-or-zero"),
    ],
)
def test_rendering(text: str, rendered: str) -> None:
    variables = {"gpusPerNode": 8, "nicsPerNode": 4, "enableMNNVL": 1}
    assert render(text, variables) == rendered


@pytest.mark.parametrize(
    ("value", "nics", "rendered"),
    [
        pytest.param("{nicsPerNode|int}", 4, 4, id="int-filter-renders-an-integer"),
        pytest.param("{nicsPerNode|int}", 0, None, id="int-filter-at-zero-drops-the-value"),
        pytest.param("{nicsPerNode}", 0, None, id="templated-zero-drops-the-value"),
        pytest.param("{nicsPerNode}", 2, "2", id="plain-template-renders-a-string"),
        pytest.param("0", 4, "0", id="literal-zero-is-kept"),
        pytest.param(3, 0, 3, id="integer-is-kept"),
    ],
)
def test_resource_values_render(value: str | int, nics: int, rendered: str | int | None) -> None:
    variables = {"gpusPerNode": 8, "nicsPerNode": nics, "enableMNNVL": 0}
    assert render_resource(value, variables) == rendered
