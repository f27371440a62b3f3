"""Cold-start floor of hexmcp's own architecture: the core and the stdio adapter serving an empty server,
under the command's start-up block (collector paused, attrs' methods from the code cache: ADRs 0011,
0013), with no command line, no tools and no background hooks.

`python -m bench.cold_start` runs it beside `hexmcp stdio`: the difference between the two is what the
command line and the tools cost before the `initialize` answer, the most that deferring them could save.
"""

from __future__ import annotations

import sys

from hexmcp.app.start.phase import starting
from hexmcp.tools.cache_dir import default_cache_dir

with starting(default_cache_dir()):
    from hexmcp.adapters.stdio.transport import claim_stdout, run_stdio
    from hexmcp.core import McpServer
    from hexmcp.core.log import configure_logging


def main() -> int:
    with starting(default_cache_dir()):
        wire_fd = claim_stdout()
        configure_logging("warning")
        server = McpServer("core-floor", "0")
    return run_stdio(server, wire_fd=wire_fd)


if __name__ == "__main__":
    sys.exit(main())
