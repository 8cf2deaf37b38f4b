"""The ``nvcre.nvidia.com/group-nodes`` annotation: plain for most groups, gzip for huge ones.

A group's node names are listed on its TrainJob for people and for ``report``. The API server
caps one object's annotations at 256 KiB in total, which a plain list of about 6,000 node
names already exceeds. Up to :data:`PLAIN_MAX` bytes the list is plain and comma-separated
under :data:`ANN_GROUP_NODES`; above, it is stored under :data:`ANN_GROUP_NODES_GZIP` as
base64 of gzip (mtime 0, so the bytes are deterministic) of the same comma-separated text,
which a 10,000-node group brings to a few tens of KiB. Decode with
``base64 -d | gunzip`` or :func:`group_nodes`. The pods are pinned by the TrainJob's
``runtimePatches`` either way; the annotation only records the group.
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Mapping, Sequence

from krm_fn.keys import ANN_GROUP_NODES, ANN_GROUP_NODES_GZIP

PLAIN_MAX = 128 * 1024
"""Largest plain list (bytes); leaves half of the 256 KiB annotation budget to the others."""


def annotate(annotations: dict[str, str], nodes: Sequence[str]) -> None:
    """Record ``nodes`` in ``annotations`` (plain or gzip, see the module doc)."""
    text = ",".join(nodes)
    if len(text.encode()) <= PLAIN_MAX:
        annotations[ANN_GROUP_NODES] = text
    else:
        packed = gzip.compress(text.encode(), compresslevel=9, mtime=0)
        annotations[ANN_GROUP_NODES_GZIP] = base64.b64encode(packed).decode()


def group_nodes(annotations: Mapping[str, str]) -> list[str] | None:
    """The node names recorded by :func:`annotate`; ``None`` when neither annotation is set."""
    if ANN_GROUP_NODES in annotations:
        return [n for n in str(annotations[ANN_GROUP_NODES]).split(",") if n]
    if ANN_GROUP_NODES_GZIP in annotations:
        text = gzip.decompress(base64.b64decode(annotations[ANN_GROUP_NODES_GZIP])).decode()
        return [n for n in text.split(",") if n]
    return None
