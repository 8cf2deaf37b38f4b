"""``krm_fn.records`` behaves like ``dataclasses`` for what the package uses, and is cheap."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krm_fn.records import FrozenInstanceError, field, fields_of, record


@record(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    KIND: ClassVar[str] = "point"


@dataclasses.dataclass(frozen=True)
class DcPoint:
    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)
    KIND: ClassVar[str] = "point"


@record(frozen=True)
class Pair:
    a: int
    b: int


@dataclasses.dataclass(frozen=True)
class DcPair:
    a: int
    b: int


@record
class Counter:
    n: int = 0


@record(frozen=True)
class Point3(Point):
    z: int = 0


@record(frozen=True)
class Checked:
    value: int
    seen: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError("negative")
        self.seen.append(self.value)


def test_construction_by_position_and_keyword_matches_dataclass() -> None:
    assert fields_of(Point) == ("x", "y", "tags")
    p = Point(1, y=2)
    assert (p.x, p.y, p.tags) == (1, 2, [])
    assert repr(Point(1, 2, ["a"])) == repr(DcPoint(1, 2, ["a"])).replace("DcPoint", "Point")


def test_default_factory_gives_every_instance_its_own_value() -> None:
    a, b = Point(1), Point(1)
    assert a.tags is not b.tags


def test_classvar_is_not_a_field() -> None:
    assert "KIND" not in fields_of(Point)
    assert Point.KIND == "point"


def test_frozen_record_refuses_assignment_and_deletion() -> None:
    p = Point(1)
    with pytest.raises(FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y


def test_mutable_record_assigns_and_is_unhashable() -> None:
    c = Counter()
    c.n += 1
    assert c == Counter(1)
    with pytest.raises(TypeError):
        hash(c)


def test_equality_needs_the_same_class() -> None:
    assert Point(1) == Point(1)
    assert Point(1) != Point3(1)
    assert Point(1) != DcPoint(1)  # type: ignore[comparison-overlap]


def test_subclass_fields_follow_the_base_fields() -> None:
    assert fields_of(Point3) == ("x", "y", "tags", "z")
    assert Point3(1, 2, [], 3).z == 3
    assert repr(Point3(1)) == "Point3(x=1, y=0, tags=[], z=0)"


def test_post_init_runs_and_may_refuse() -> None:
    assert Checked(3).seen == [3]
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_field_without_default_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):

        @record
        class Bad:
            a: int = 0
            b: int  # type: ignore[misc]


def test_missing_and_unknown_arguments_raise_type_error() -> None:
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, w=2)  # type: ignore[call-arg]


def test_pickle_round_trip_keeps_frozen_records_equal() -> None:
    p = Point3(1, 2, ["a"], 4)
    assert pickle.loads(pickle.dumps(p)) == p


@given(st.integers(), st.integers(), st.lists(st.text(max_size=3), max_size=3))
def test_hash_eq_and_repr_agree_with_dataclasses(x: int, y: int, tags: list[str]) -> None:
    ours, theirs = Point(x, y, tags), DcPoint(x, y, tags)
    assert repr(ours) == repr(theirs).replace("DcPoint", "Point")
    assert (ours == Point(x, y, list(tags))) == (theirs == DcPoint(x, y, list(tags)))
    assert hash(Pair(x, y)) == hash(Pair(x, y)) == hash(DcPair(x, y))


def test_defining_records_imports_neither_dataclasses_nor_inspect() -> None:
    code = (
        "import sys\n"
        "from krm_fn.records import record, field\n"
        "@record(frozen=True)\n"
        "class A:\n    a: int\n    b: list[int] = field(default_factory=list)\n"
        "assert A(1) == A(1)\n"
        "print(' '.join(m for m in ('dataclasses', 'inspect') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""
