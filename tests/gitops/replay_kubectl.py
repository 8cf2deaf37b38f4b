#!/usr/bin/env python3
"""A stand-in for kubectl that answers from recorded `kubectl get trainjobs -o json` outputs.

Used only through `workloadrun-fn release --kubectl` (the documented seam): each `get` prints
the next file of $REPLAY_DIR (the last one again once they are used up); each `patch` appends
its argv as one JSON line to $REPLAY_LOG.
"""

import json
import os
import sys
from pathlib import Path

state = Path(os.environ["REPLAY_DIR"])
log = Path(os.environ["REPLAY_LOG"])
files = sorted(state.glob("*.json"))
counter = log.with_suffix(".count")
n = int(counter.read_text()) if counter.exists() else 0
verb = sys.argv[1]
if verb == "get":
    sys.stdout.write(files[min(n, len(files) - 1)].read_text())
    counter.write_text(str(n + 1))
elif verb == "patch":
    with log.open("a") as f:
        f.write(json.dumps({"after_get": n, "argv": sys.argv[1:]}) + "\n")
else:
    sys.exit(f"replay_kubectl: unsupported verb {verb}")
