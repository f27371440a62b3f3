"""What a piece of code imports, run in a fresh interpreter: the check behind every "stays light" test
(a start path, a package, a tool registration must not load numpy, onnxruntime, ... before it needs them)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Iterable


def modules_imported_by(code: str, modules: Iterable[str], *, timeout_s: float = 120) -> list[str]:
    """Run `code` in a new `python -c`; the names in `modules` that are in `sys.modules` after it, sorted.
    The code failing fails the calling test, with the child's stderr."""
    names = tuple(modules)
    # The list is taken before json is imported to print it, so json itself can be asked about.
    probe = (f"{code}\nimport sys\n_loaded = sorted(m for m in {names!r} if m in sys.modules)\n"
             "import json\nprint(json.dumps(_loaded))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=timeout_s, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])
