"""A cache directory someone else controls is refused before anything is read from it (issue 30): one line,
exit 4, for a directory owned by another user, one group or others may write without the sticky bit, and a
sticky one holding another user's entry; the suggested fixes give a directory of one's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hexmcp.core.startup import ExitCode
from hexmcp.tools.cache_dir import private_dir_fix, untrusted_fix, untrusted_reason
from hexmcp.tools.classification import CacheDirError
from hexmcp.tools.classification.flags import explain
from hexmcp.tools.classification.preflight import check_cache_dir

pytestmark = pytest.mark.timeout(120)
OTHER_UID = 54321
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")


def _run(command: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HEXMCP_CACHE_DIR": str(cache), "HEXMCP_LOG_LEVEL": "warning"}
    return subprocess.run([sys.executable, "-m", "hexmcp.app.cli", command, "--no-classifier", "--no-knowledge"],
                          env=env, input="", capture_output=True, text=True, timeout=60)


def _refused_in_one_line(out: subprocess.CompletedProcess[str], command: str, cache: Path, reason: str) -> None:
    assert out.returncode == ExitCode.CACHE_DIR_UNUSABLE, out.stderr
    [line] = out.stderr.splitlines()
    assert line.startswith(f"hexmcp {command}: the cache directory {cache} is unusable: {reason}"), line
    assert out.stdout == ""


@as_root
@pytest.mark.parametrize("command", ["stdio", "serve"])
def test_a_cache_owned_by_another_user_is_refused(tmp_path: Path, command: str) -> None:
    cache = tmp_path / "hexmcp"
    (cache / "start").mkdir(parents=True)
    os.chown(cache, OTHER_UID, OTHER_UID)
    out = _run(command, cache)
    _refused_in_one_line(out, command, cache, f"it belongs to uid {OTHER_UID}, not to this user (uid 0)")
    assert out.stderr.rstrip().endswith('fix: export HEXMCP_CACHE_DIR="$HOME/.cache/hexmcp"')
    assert os.listdir(cache / "start") == []  # nothing written there either


def test_a_cache_others_may_write_is_refused_and_the_fix_closes_it(tmp_path: Path) -> None:
    cache = tmp_path / "hexmcp"
    cache.mkdir()
    cache.chmod(0o777)
    out = _run("stdio", cache)
    _refused_in_one_line(out, "stdio", cache, "group or others may write to it (mode 0777)")
    assert out.stderr.rstrip().endswith(f"fix: chmod go-w {cache}")
    subprocess.run(["chmod", "go-w", str(cache)], check=True)  # the fix, as printed
    assert _run("stdio", cache).returncode == 0


@as_root
def test_a_sticky_shared_cache_is_used_unless_another_user_put_something_in_it(tmp_path: Path) -> None:
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o1777)  # like /tmp: others may create entries, not replace ours
    assert _run("stdio", cache).returncode == 0
    planted = cache / "models"
    planted.mkdir()
    os.chown(planted, OTHER_UID, OTHER_UID)
    _refused_in_one_line(_run("stdio", cache), "stdio", cache,
                         f"models in it belongs to uid {OTHER_UID}, not to this user (uid 0)")


@as_root
def test_the_classifiers_own_check_refuses_it_too(tmp_path: Path) -> None:
    """A cache given in the classifier's config (not $HEXMCP_CACHE_DIR) goes through the same check."""
    cache = tmp_path / "hexmcp"
    cache.mkdir()
    os.chown(cache, OTHER_UID, OTHER_UID)
    with pytest.raises(CacheDirError) as raised:
        check_cache_dir(cache)
    problem = explain(raised.value)
    assert problem is not None and problem.exit_code == ExitCode.CACHE_DIR_UNUSABLE
    assert f"belongs to uid {OTHER_UID}" in problem.line


def test_a_missing_cache_is_fine_and_root_owned_ones_are_trusted(tmp_path: Path) -> None:
    assert untrusted_reason(tmp_path / "not-yet") is None
    assert untrusted_reason(Path("/usr")) is None  # root's, mode 0755


def test_no_fix_suggests_a_fixed_name_under_the_shared_temporary_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home_default = tmp_path / "home" / ".cache" / "hexmcp"
    unusable = explain(CacheDirError(home_default, "Read-only file system")).line
    for fix in (untrusted_fix(home_default), unusable.split("; fix: ")[1]):
        assert "/tmp" not in fix and "TMPDIR" not in fix, fix
        assert private_dir_fix() in fix
    made = subprocess.run(["bash", "-c", f'{private_dir_fix()} && echo "$HEXMCP_CACHE_DIR"'], capture_output=True,
                          text=True, check=True, env={**os.environ, "TMPDIR": str(tmp_path)}).stdout.strip()
    assert untrusted_reason(Path(made)) is None and (os.stat(made).st_mode & 0o777) == 0o700
