"""The audit trail's salt: generated once per deployment and kept, shared by every process, or given."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hexmcp.adapters.audit import ClientIds, SaltError, deployment_salt
from hexmcp.adapters.audit.salt import SALT_ENV

from ..support.wire import REPO_ROOT


def test_a_missing_salt_file_is_generated_private_and_then_kept(tmp_path: Path) -> None:
    path = tmp_path / "audit.log.salt"
    first = deployment_salt(str(path), {})
    assert len(first) >= 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert deployment_salt(str(path), {}) == first  # a restart salts alike
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_the_environment_wins_and_a_short_salt_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "salt"
    assert deployment_salt(str(path), {SALT_ENV: "x" * 20}) == b"x" * 20 and not path.exists()
    with pytest.raises(SaltError, match="shorter than 16 bytes"):
        deployment_salt(str(path), {SALT_ENV: "short"})
    path.write_text("tiny\n")
    with pytest.raises(SaltError, match="shorter than 16 bytes"):
        deployment_salt(str(path), {})


_RACER = """
import sys
from hexmcp.adapters.audit import deployment_salt
print(deployment_salt(sys.argv[1], {}).decode())
"""


def test_workers_starting_together_all_get_the_one_salt(tmp_path: Path) -> None:
    path = tmp_path / "audit.log.salt"
    racers = [subprocess.Popen([sys.executable, "-c", _RACER, str(path)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                               text=True) for _ in range(6)]
    salts = {racer.communicate(timeout=60)[0].strip() for racer in racers}
    assert salts == {path.read_text().strip()}


def test_ids_keep_their_kind_and_correlate_only_under_one_salt() -> None:
    ids = ClientIds(b"s" * 32)
    assert ids.of("address:10.0.0.7") == ids.of("address:10.0.0.7") != ids.of("address:10.0.0.8")
    assert ids.of("address:10.0.0.7").startswith("address:") and "10.0.0.7" not in ids.of("address:10.0.0.7")
    assert ids.of("alice@example.com").startswith("client:") and ids.of(None) is None
    assert ClientIds(b"t" * 32).of("address:10.0.0.7") != ids.of("address:10.0.0.7")
