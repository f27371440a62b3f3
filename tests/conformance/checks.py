"""Assertions shared by the properties: answers matched to ids, liveness, and the restart on failure."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from hypothesis import event

from .drivers import Closed, Driver
from .drivers.base import key
from .targets import Target


def error_code(answer: dict[str, Any] | None) -> int | None:
    error = answer.get("error") if isinstance(answer, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def assert_alive(driver: Driver, after: str) -> dict[str, Any]:
    """The server still answers its liveness probe correctly after `after`."""
    try:
        answer = driver.request(driver.probe(), {} if driver.probe() != "ping" else None, timeout=10)
    except Closed as exc:
        raise AssertionError(f"the server is gone after {after}: {exc}") from None
    assert answer is not None, f"no answer to {driver.probe()} within 10 s after {after}: the server is wedged"
    assert isinstance(answer.get("result"), dict), f"{driver.probe()} after {after} was answered with {answer}"
    return answer


def check_answers(sent_ids: list[Any], answers: dict[Any, list[dict]], others: list[Any]) -> None:
    """Each sent id answered exactly once with its own id; nothing answered that was not asked."""
    expected = {key(i) for i in sent_ids}
    unanswered = [i for i in sent_ids if key(i) not in answers]
    assert not unanswered, f"requests never answered: {unanswered}"
    twice = {k: v for k, v in answers.items() if len(v) > 1}
    assert not twice, f"requests answered more than once: {twice}"
    strangers = [m for k, ms in answers.items() if k not in expected for m in ms]
    assert not strangers, f"responses to ids that were never sent (or null): {strangers}"
    event(f"answers per example: {len(sent_ids)}")


@contextlib.contextmanager
def restart_on_failure(target: Target, version: str | None = None) -> Iterator[None]:
    """A failing example may leave the connection broken: start the next example on a new one."""
    try:
        yield
    except BaseException:
        target.restart(*(version,) if version else ())
        raise
