"""The `hexmcp` parser's usage errors: one line on stderr, exit 2.

argparse prints the command's whole usage before its error line; for `hexmcp serve`, with every pack's
flags, that is over forty lines above the one that names the problem, in a service's log too. The
error line itself is argparse's (`hexmcp serve: error: argument --port: ...`); `--help` still prints
the usage.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from hexmcp.core.startup import ExitCode


class OneLineErrorParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are the error line alone; its subcommands' parsers are of this
    class too (argparse makes them with the parent's class)."""

    def error(self, message: str) -> NoReturn:
        hint = f"; {self.prog} --help lists the commands" if self._subparsers is not None else ""
        self.exit(ExitCode.USAGE, f"{self.prog}: error: {message}{hint}\n")
