"""Start-up refuses limits that would make the server refuse everything, with a clear message."""

from __future__ import annotations

import pytest

from hexmcp.app import cli
from hexmcp.adapters.stdio.transport import DEFAULT_MAX_MESSAGE_BYTES, LineSplitter


@pytest.mark.parametrize("value", ["0", "-1", "lots", "1.5"])
def test_a_nonsensical_max_message_bytes_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.parse_args(["stdio", "--max-message-bytes", value])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "--max-message-bytes" in error and "must be a positive integer" in error


def test_a_positive_max_message_bytes_is_taken_as_is() -> None:
    assert cli.parse_args(["stdio", "--max-message-bytes", "1"]).max_message_bytes == 1
    assert cli.parse_args(["stdio"]).max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES


@pytest.mark.parametrize("limit", [0, -1])
def test_the_line_splitter_refuses_a_limit_that_admits_nothing(limit: int) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        LineSplitter(limit)
