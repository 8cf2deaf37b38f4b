"""Hostile YAML texts shared by the bomb tests (built small, expanding huge)."""

from __future__ import annotations

from krm_fn.io import limits

CM_HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n"


def billion_laughs(levels: int = 10, fan_out: int = 9) -> str:
    """The classic: ``fan_out ** levels`` strings from about a kilobyte of text."""
    lines = [f"  a0: &a0 [{', '.join(['lol'] * fan_out)}]"]
    for i in range(1, levels):
        lines.append(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * fan_out)}]")
    return CM_HEAD + "\n".join(lines) + "\n"


def alias_tower(anchors: int = 10, levels_each: int = 60) -> str:
    """Each anchor nests the previous one ``levels_each`` deeper: shallow text, deep data."""
    lines = []
    prev = "leaf"
    for i in range(anchors):
        lines.append(f"  t{i}: &t{i} " + "[" * levels_each + prev + "]" * levels_each)
        prev = f"*t{i}"
    return CM_HEAD + "\n".join(lines) + "\n"


def deep_flow(depth: int, kind: str = "seq") -> str:
    """``depth`` nested flow sequences (or mappings) under one ConfigMap key."""
    body = "[" * depth + "]" * depth if kind == "seq" else "{a: " * depth + "1" + "}" * depth
    return CM_HEAD + f"  deep: {body}\n"


def many_nodes(count: int) -> str:
    """A ConfigMap whose data has ``count`` keys (about ``2 * count`` YAML nodes)."""
    return CM_HEAD + "".join(f"  k{i}: v\n" for i in range(count))


def oversized(extra: int = 1) -> bytes:
    """One ConfigMap whose single value pushes the input ``extra`` bytes past the limit."""
    head = (CM_HEAD + "  big: '").encode()
    tail = b"'\n"
    filler = limits.MAX_INPUT_BYTES + extra - len(head) - len(tail)
    return head + b"x" * filler + tail
