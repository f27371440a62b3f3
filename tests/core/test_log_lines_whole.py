"""Several processes logging to one stderr (`hexmcp serve --workers N`, a supervisor's children) leave one
JSON object per line: each line goes out in a single write, never the line and its newline apart."""

from __future__ import annotations

import json
import subprocess
import sys
import time

LINES = 5000
LOGGER = f"""
LINES = {LINES}
import sys, time
from hexmcp.core.log import configure_logging
import structlog
configure_logging("info", json_output=True)
log = structlog.get_logger("t")
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))  # all start together, as workers told to drain do
for n in range(LINES):
    log.info("line", writer=sys.argv[1], n=n)
"""


def test_lines_from_processes_sharing_stderr_never_interleave(tmp_path) -> None:
    path = tmp_path / "stderr"
    with open(path, "wb") as shared:
        start = str(time.time() + 3)  # after every interpreter has started
        writers = [subprocess.Popen([sys.executable, "-c", LOGGER, str(k), start], stderr=shared) for k in range(3)]
        assert [writer.wait(timeout=120) for writer in writers] == [0, 0, 0]
    events = [json.loads(line) for line in path.read_text().splitlines()]  # every line one object
    assert sorted((event["writer"], event["n"]) for event in events) == [
        (str(k), n) for k in range(3) for n in range(LINES)]
