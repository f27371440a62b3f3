"""A bad --taxonomy file stops `hexmcp stdio` and `hexmcp serve` before they serve anything; what
`hexmcp stdio` does before serving stays off the heavy imports (issue 14's cold start, ADR 0007)."""

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


# Imported only by work that runs after the handshake (the model, the index), never before `initialize`.
DEFERRED_MODULES = ("numpy", "onnx", "onnxruntime", "tokenizers", "safetensors", "bm25s", "jsonschema")


def test_the_stdio_start_path_imports_no_deferred_module():
    """Everything `hexmcp stdio` runs before it serves: flags, logging, both tool sets with the model
    prepared (the cached model named and verified) and the corpus read."""
    code = (
        "import sys\n"
        "from hexmcp.adapters import cli\n"
        "from hexmcp.core.log import configure_logging\n"
        "args = cli.parse_args(['stdio'])\n"
        "configure_logging('warning')\n"
        "server, service = cli.build_server_and_service(args)\n"
        "knowledge = cli.build_knowledge(server, args)\n"
        "assert service is not None and knowledge is not None\n"
        "cli.build_gateway_tools(server, cli.gateway_config(args), service, knowledge)\n"
        f"print(sorted(m for m in {DEFERRED_MODULES!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
