"""A bad --taxonomy file stops `hexmcp stdio` and `hexmcp serve` before they serve anything."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.net import free_port


@pytest.mark.parametrize("command", ["stdio", "serve"])
@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("bad.csv", "cat,txt\na,b\n", "bad.csv, line 1: header lacks column(s) category, text"),
        ("bad.yaml", "categories:\n  - name: a\n    model: m\n    examples: [x]\n  - name: b\n    examples: [y]\n",
         "bad.yaml, line 2: unknown key(s) model in category 'a'"),
        ("absent.csv", None, "absent.csv: cannot read file"),
    ],
)
def test_bad_taxonomy_fails_start_up_with_file_line_and_reason(tmp_path, command, name, content, expected):
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    extra = ["--port", str(free_port())] if command == "serve" else []
    out = subprocess.run(
        [sys.executable, "-m", "hexmcp.adapters.cli", command, "--taxonomy", str(path), *extra],
        input=b"", capture_output=True, timeout=60, check=False,
    )
    assert out.returncode == 2
    assert out.stdout == b""  # stdio: nothing but protocol messages, and there were none
    assert expected in out.stderr.decode()
