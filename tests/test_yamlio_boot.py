"""The cheap stand-in for PyYAML's non-printable character class is exactly equivalent."""

from __future__ import annotations

import re
import subprocess
import sys

from krm_fn.yamlio import NON_PRINTABLE_COMPLEMENT, YAML_NON_PRINTABLE


def test_complement_matches_the_same_characters_over_every_code_point() -> None:
    every = "".join(map(chr, range(0x110000)))
    ours = re.compile(NON_PRINTABLE_COMPLEMENT).findall(every)
    theirs = re.compile(YAML_NON_PRINTABLE).findall(every)
    assert ours == theirs
    assert len(ours) > 2000  # controls, C1, surrogates, U+FFFE/U+FFFF


def test_the_pattern_is_pyyamls_own() -> None:
    probe = (
        "import yaml.reader\n"
        "print(yaml.reader.Reader.NON_PRINTABLE.pattern == "
        f"{YAML_NON_PRINTABLE!r})\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", "PyYAML changed its pattern: update krm_fn.yamlio"


def test_after_import_yaml_uses_the_stand_in_and_still_refuses_control_characters() -> None:
    probe = (
        "import krm_fn.yamlio, yaml\n"
        "print(yaml.reader.Reader.NON_PRINTABLE.pattern == "
        f"{NON_PRINTABLE_COMPLEMENT!r})\n"
        "try:\n"
        "    yaml.load('a: \\x01', Loader=yaml.SafeLoader)\n"
        "except yaml.reader.ReaderError:\n"
        "    print('refused')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "refused"]
