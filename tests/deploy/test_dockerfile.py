"""deploy/Dockerfile without docker: its instructions are parsed and checked against the server, and its
`python -m` build steps (the model warm-up) are run here, into a temporary cache."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hexmcp.app.cli import parse_args

DOCKERFILE = Path(__file__).resolve().parents[2] / "deploy" / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    joined, lines = "", []
    for raw in DOCKERFILE.read_text().splitlines():
        if raw.lstrip().startswith("#") or not raw.strip():
            continue
        joined += raw.rstrip().removesuffix("\\") + " "
        if not raw.rstrip().endswith("\\"):
            lines.append(joined.strip())
            joined = ""
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


INSTRUCTIONS = _instructions()


def _last(kind: str) -> str:
    return [args for name, args in INSTRUCTIONS if name == kind][-1]


def _index(kind: str, containing: str = "") -> int:
    return next(i for i, (name, args) in enumerate(INSTRUCTIONS) if name == kind and containing in args)


def test_the_image_serves_as_a_non_root_user_and_warms_up_as_that_user() -> None:
    user = _last("USER")
    assert user not in ("root", "0") and not user.startswith("0:")
    assert _index("USER") < _index("RUN", "warmup") < _index("ENTRYPOINT")


def test_the_command_is_a_valid_stateless_serve_on_the_exposed_port() -> None:
    command = json.loads(_last("ENTRYPOINT")) + json.loads(_last("CMD"))
    assert command[:2] == ["hexmcp", "serve"]
    args = parse_args(command[1:])
    assert args.stateless and args.host == "0.0.0.0"
    assert _last("EXPOSE") == str(args.port)
    assert _last("STOPSIGNAL") == "SIGTERM"  # what starts the drain


def test_the_cache_dir_is_set_for_the_build_and_the_server() -> None:
    env = _last("ENV")
    assert "HEXMCP_CACHE_DIR=/var/cache/hexmcp" in env
    assert "chown hexmcp /var/cache/hexmcp" in _last("RUN") or any(
        "chown hexmcp /var/cache/hexmcp" in args for name, args in INSTRUCTIONS if name == "RUN")


def test_every_copied_folder_exists() -> None:
    root = DOCKERFILE.parents[1]
    for name, args in INSTRUCTIONS:
        if name == "COPY":
            *sources, _ = args.split()
            for source in sources:
                assert (root / source).exists(), source


@pytest.mark.timeout(300)
def test_the_python_build_steps_run_and_leave_a_converted_model(tmp_path) -> None:
    steps = [args for name, args in INSTRUCTIONS if name == "RUN" and args.startswith("python -m hexmcp")]
    assert steps, "no python build step found"
    for step in steps:
        argv = shlex.split(step)
        completed = subprocess.run([sys.executable, *argv[1:]], env={**os.environ, "HEXMCP_CACHE_DIR": str(tmp_path)},
                                   capture_output=True, text=True, timeout=280)
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout == ""  # build output goes to stderr
    assert list((tmp_path / "models").glob("*-int8.onnx")), "the warm-up left no converted model"


def test_the_base_image_is_pinned_by_digest() -> None:
    base = _last("FROM").split()[0]
    assert re.search(r"@sha256:[0-9a-f]{64}$", base), f"{base}: a tag alone can be moved to another image"


def test_the_images_command_refuses_to_serve_all_interfaces_without_a_token() -> None:
    command = json.loads(_last("ENTRYPOINT")) + json.loads(_last("CMD"))
    env = {k: v for k, v in os.environ.items() if k not in ("HEXMCP_AUTH_TOKEN", "HEXMCP_AUTH_TOKEN_FILE")}
    completed = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", *command[1:], "--no-classifier",
                                "--no-knowledge"], env=env, capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
    assert completed.returncode == 2
    assert completed.stderr.startswith("hexmcp serve: refusing to serve on 0.0.0.0 without authentication")
