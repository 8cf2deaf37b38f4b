"""The fast reader: every input form read without building Python objects for the Nodes.

Job: cut the ResourceList text into its items, read from every Node only the fields the
render uses (the Node view of :mod:`krm_fn.io.nodes`), keep every item's exact text so it
is passed through verbatim, and work out where the ``config.kubernetes.io/local-config``
annotation goes. Items the fast reader does not handle are parsed by PyYAML one at a time;
when even the item boundaries are uncertain, :func:`read` returns a :class:`Fallback` and
the caller parses the whole input with PyYAML (the full path).

How: (1) characters: UTF-8 without tab, CR, control characters, BOM, NEL, LS, PS; (2) the
items cut at column 0 and the header around them parsed by PyYAML, which decides whether it
is a ResourceList (a plain stream is rewritten as items first); (3) classification: for each
item ``apiVersion``, ``kind`` and ``metadata``, for a Node its view, decoded exactly as
PyYAML would; (4) the strict line grammar (:func:`strict_ok`: block style only, no flow
collections, anchors, tags, quoted keys or full-line comments) over every item read so,
which makes (2) and (3) sound; an item that fails it is read by PyYAML before :func:`read`
returns. A large input is shared with a forked helper (:mod:`.helper`) that works from the
last item down while this process imports the render.

Invariants:
    * For every accepted input the items, their dicts, flags and NodeInfos equal those of
      the full path, and every input it refuses the fast path refuses too, but for the
      two cases below (``tests/test_fastio_parity.py``, ``tests/test_yaml_differential.py``); an item's text
      is its input text, and an edit of it is made from its line structure only when the
      item passed the strict grammar.
    * An item read by PyYAML keeps its text too: its annotation is inserted at the place
      PyYAML's marks give (block or flow style), ruamel.yaml's round-trip being the last
      resort, and the edit is verified by parsing it, so user comments survive.
    * Malformed input never raises from here: the result is a :class:`Fallback` (or an item
      handed to PyYAML) and the full path reports the problem; inputs over
      :data:`FAST_MAX_INPUT_BYTES` go to the full path (and its limits) as well.
    * Not detected, by design (both need a full parse of sections never read): a duplicate
      key inside such a section, and a ``- entry`` dedented to the column of a mapping whose
      key had a mapping value (the grammar checks each line against the next one only).
      kpt and kustomize refuse both when they read them; what the function reads is exact.

Modules (each states its invariants):
    * :mod:`.grammar`: structural patterns, the strict line grammar, the character rule.
    * :mod:`.scalars`: one-line scalars and keys decoded as PyYAML does.
    * :mod:`.model`: :class:`Item` and what classification finds about it.
    * :mod:`.extract`: classification and Node extraction from an item's text.
    * :mod:`.edits`: the local-config edit of an item's text.
    * :mod:`.helper`: the forked helper process.
    * :mod:`.units`: the units of work (items, the Nodes of a ``v1 List``).
    * :mod:`.streams`: a plain stream as items, and each item back as its document.
    * :mod:`.reader`: :func:`read` (ResourceList or plain stream), :class:`FastList`.
"""

from __future__ import annotations

from krm_fn.io.fastio.edits import insert_local_config
from krm_fn.io.fastio.grammar import strict_ok
from krm_fn.io.fastio.model import Item
from krm_fn.io.fastio.reader import (
    FAST_MAX_INPUT_BYTES,
    Fallback,
    FastList,
    read,
)
from krm_fn.io.fastio.scalars import Irregular

__all__ = [
    "FAST_MAX_INPUT_BYTES",
    "Fallback",
    "FastList",
    "Irregular",
    "Item",
    "insert_local_config",
    "read",
    "strict_ok",
]
