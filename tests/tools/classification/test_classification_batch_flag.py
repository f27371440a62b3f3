"""--classifier-batch reaches the config, and only fp32 and int8row batch (int8 answers would depend on
batch-mates)."""

from __future__ import annotations

import pytest

from hexmcp.app.cli import parse_args
from hexmcp.tools.classification import ClassificationConfig
from hexmcp.tools.classification.flags import classification_config


def test_flag_and_its_variable_reach_the_config(monkeypatch):
    assert classification_config(parse_args(["serve"])).max_batch == 32
    assert classification_config(parse_args(["serve", "--classifier-batch", "8"])).max_batch == 8
    monkeypatch.setenv("HEXMCP_CLASSIFIER_BATCH", "4")
    assert classification_config(parse_args(["stdio"])).max_batch == 4


@pytest.mark.parametrize("value", ["0", "257", "-1", "many"])
def test_a_batch_size_outside_1_to_256_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(["serve", "--classifier-batch", value])
    assert exited.value.code == 2 and "--classifier-batch" in capsys.readouterr().err


def test_only_batch_invariant_precisions_batch():
    assert ClassificationConfig(quantization="fp32").batches()
    assert ClassificationConfig(quantization="int8row").batches()
    assert not ClassificationConfig(quantization="fp32", max_batch=1).batches()
    assert not ClassificationConfig(quantization="int8row", max_batch=1).batches()
    assert not ClassificationConfig(quantization="int8", max_batch=32).batches()
