"""A plain stream as ResourceList items and back (krm_fn.io.fastio.streams).

* Each item of the rewrite reads as the document its span names in the input.
* Writing a document back (marked local-config or not) gives the reference's text: the item
  with its indentation taken off, whether it is sliced from the input or rewritten.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krm_fn.io import fastio
from krm_fn.io.fastio import streams
from krm_fn.io.resourcelist import chunks_text

SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)

NODE_DOC = """\
apiVersion: v1
kind: Node
metadata:
  name: {name}
{meta}spec:
  providerID: aws:///z/i-1
status:
  allocatable:
    nvidia.com/gpu: "8"
  conditions:
  - type: Ready
    status: "True"
"""
_META = st.sampled_from(
    [
        "  labels:\n    k: v\n",
        "  annotations:\n    a: b\n  labels:\n    k: v\n",
        "  annotations: {}\n",
        "  annotations:\n    config.kubernetes.io/local-config: 'false'\n",
        "  labels: {k: v}\n",  # flow style: read by PyYAML
        "  labels:\n    k: \u00e9t\u00e9\n",  # not ASCII
        "  labels:\n\n    k: v\n",  # an empty line inside
        "  labels:\n    k: |\n      two\n      lines\n",
        "",
    ]
)
_PREFIX = st.sampled_from(["", "# before\n", "\n", "# a\n\n# b\n"])


_STREAMS = st.lists(st.tuples(_PREFIX, _META), min_size=1, max_size=4)


def _stream(docs: list[tuple[str, str]]) -> str:
    return "---\n".join(
        prefix + NODE_DOC.format(name=f"n{i}", meta=meta) for i, (prefix, meta) in enumerate(docs)
    )


@SETTINGS
@given(_STREAMS, st.booleans())
def test_each_item_of_the_rewrite_reads_as_the_document_its_span_names(
    docs: list[tuple[str, str]], lead: bool
) -> None:
    text = ("---\n" if lead else "") + _stream(docs)
    got = streams.stream_as_items(text)
    assert isinstance(got, streams.StreamItems)
    items = yaml.safe_load(got.text)["items"]
    assert len(items) == len(got.spans) == len(docs)
    for item, span in zip(items, got.spans, strict=True):
        if span is not None:  # (None: the document has an empty line)
            assert item == yaml.safe_load(text[span[0] : span[1]])


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("a: 1\n--- b: 2\n", "content on a '---' line"),
        ("%YAML 1.1\n---\na: 1\n", "directives"),
        ("a: 1\n...\n", "'...' markers"),
    ],
    ids=["content-on-a-separator", "a-directive", "a-document-end-marker"],
)
def test_streams_the_rewrite_does_not_handle_say_why(text: str, why: str) -> None:
    got = streams.stream_as_items(text)
    assert isinstance(got, str) and why in got


@SETTINGS
@given(_STREAMS, st.booleans())
def test_a_document_is_written_back_as_the_reference_writes_it(
    docs: list[tuple[str, str]], mark: bool
) -> None:
    text = _stream(docs)
    fast = fastio.read(text)
    if isinstance(fast, fastio.Fallback):
        return
    assert fast.stream
    for it in fast.items:
        edit = fast.edit(it) if mark else None
        a, b, new = edit if edit is not None else (it.start, it.start, "")
        reference = streams._reindented(fast.text[it.start : a] + new + fast.text[b : it.end])
        assert chunks_text(fast.document_pieces(it, mark)) == reference


@pytest.mark.parametrize("mark", [False, True], ids=["as-read", "marked-local-config"])
def test_plain_documents_are_written_from_slices_of_the_input_not_copies(mark: bool) -> None:
    kubectl_stream = "---\n".join(NODE_DOC.format(name=f"n{i}", meta="") for i in range(4))
    fast = fastio.read(kubectl_stream)
    assert isinstance(fast, fastio.FastList) and fast.source is not None
    for it in fast.items:
        pieces = fast.document_pieces(it, mark)
        assert isinstance(pieces[0], memoryview) and isinstance(pieces[-1], memoryview)
        assert [type(p) for p in pieces] == (
            [memoryview, str, memoryview] if mark else [memoryview]
        )
        assert chunks_text(fast.document_pieces(it, mark)).startswith(
            "apiVersion: v1\nkind: Node\n"
        )


def test_a_resource_list_is_written_from_slices_of_the_input() -> None:
    rl_text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + "".join(
        "- " + NODE_DOC.format(name=f"n{i}", meta="").replace("\n", "\n  ")[:-2] for i in range(3)
    )
    fast = fastio.read(rl_text)
    assert isinstance(fast, fastio.FastList) and fast.text_bytes is not None
    piece = fast.text_slice(fast.items[0].start, fast.items[-1].end)
    assert isinstance(piece, memoryview)
    assert str(piece, "ascii") == fast.text[fast.items[0].start : fast.items[-1].end]
