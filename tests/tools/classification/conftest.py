"""One real model for the whole session: converting and embedding once keeps the suite fast."""

from __future__ import annotations

import asyncio

import pytest

from hexmcp.tools.classification import ClassificationConfig, ClassificationService


@pytest.fixture(scope="session")
def model_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    # A fresh cache: the session exercises conversion, quantization and the embedding cache for real.
    return tmp_path_factory.mktemp("hexmcp-cache")


@pytest.fixture(scope="session")
def event_loop_runner():
    runner = asyncio.Runner()
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def service(model_cache_dir, event_loop_runner) -> ClassificationService:
    svc = ClassificationService.from_config(ClassificationConfig(cache_dir=model_cache_dir))
    event_loop_runner.run(svc.start())
    yield svc
    event_loop_runner.run(svc.close())
