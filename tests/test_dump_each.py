"""krm_fn.io.dump_each: many objects written on two cores give exactly the one-core text."""

from __future__ import annotations

import os
from typing import Any

import pytest

from krm_fn.io import dump_each, fastdump


def _objects(n: int) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": f"run-group-{i}", "labels": {"nvcre.nvidia.com/wave": str(i % 3)}},
            "spec": {"trainer": {"args": ["-x", f"N={i}", "multi\nline"], "numNodes": 2}},
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("item", [False, True], ids=["documents", "resource-list-items"])
def test_two_cores_write_exactly_what_one_core_writes(
    item: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    objs = _objects(9)
    one = fastdump.dump_item if item else fastdump.dump
    forks: list[int] = []
    real_fork = os.fork
    monkeypatch.setattr(dump_each, "PARALLEL_MIN", 2)
    monkeypatch.setattr(dump_each, "_cpus", lambda: 2)
    monkeypatch.setattr(dump_each.os, "fork", lambda: forks.append(1) or real_fork())
    assert dump_each.dump_each(objs, item=item) == [one(o) for o in objs]
    assert forks == [1]


def test_a_child_that_dies_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    objs = _objects(6)
    monkeypatch.setattr(dump_each, "PARALLEL_MIN", 2)
    monkeypatch.setattr(dump_each, "_cpus", lambda: 2)

    def die(*_: Any) -> None:
        os._exit(3)

    monkeypatch.setattr(dump_each, "_child", die)
    assert dump_each.dump_each(objs) == [fastdump.dump(o) for o in objs]


def test_a_child_that_sends_garbage_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    objs = _objects(6)
    monkeypatch.setattr(dump_each, "PARALLEL_MIN", 2)
    monkeypatch.setattr(dump_each, "_cpus", lambda: 2)

    def garbage(_objs: Any, _one: Any, rfd: int, wfd: int) -> None:
        os.close(rfd)
        os.write(wfd, (5).to_bytes(8, "big") + b"abc")  # shorter than announced
        os._exit(0)

    monkeypatch.setattr(dump_each, "_child", garbage)
    assert dump_each.dump_each(objs) == [fastdump.dump(o) for o in objs]


def test_few_objects_or_one_cpu_fork_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dump_each.os, "fork", lambda: pytest.fail("forked"))
    monkeypatch.setattr(dump_each, "_cpus", lambda: 2)
    small = _objects(dump_each.PARALLEL_MIN - 1)
    assert dump_each.dump_each(small) == [fastdump.dump(o) for o in small]
    monkeypatch.setattr(dump_each, "_cpus", lambda: 1)
    big = _objects(dump_each.PARALLEL_MIN)
    assert dump_each.dump_each(big) == [fastdump.dump(o) for o in big]
