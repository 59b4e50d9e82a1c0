"""Config: defaults in code, a TOML file, command-line overrides, clear errors."""

from __future__ import annotations

import pytest

from flows.config import ConfigError, config_toml, load_config
from txl.train_config import load_train_config


def test_defaults():
    cfg = load_config()
    assert cfg.segment.max_tokens == 384
    assert cfg.run.task_runner == "threads"


def test_file_then_overrides(tmp_path):
    path = tmp_path / "ldx.toml"
    path.write_text('[segment]\nmax_tokens = 256\n[parse]\nocr_language = "eng"\n', encoding="utf-8")
    cfg = load_config(path, ["segment.max_tokens=128", "model.device=cuda", 'run.stages=["parse"]'])
    assert cfg.segment.max_tokens == 128
    assert cfg.parse.ocr_language == "eng"
    assert cfg.model.device == "cuda"
    assert cfg.run.stages == ["parse"]


def test_show_round_trips(tmp_path):
    overrides = [
        "segment.pack_tiny=true",
        'retrieval.arm_weights={"bm25": 2.0, "txl": 0.5}',  # a table inside a section
        "parse.ocr_max_pages=3",
        'segment.connectives=["但是", "however"]',
    ]
    cfg = load_config(None, overrides)
    path = tmp_path / "shown.toml"
    path.write_text(config_toml(cfg), encoding="utf-8")
    assert load_config(path) == cfg
    assert "# checkpoint = (unset)" in config_toml(cfg)  # TOML has no null: unset keys stay comments


def test_training_config_takes_the_same_overrides(tmp_path):
    path = tmp_path / "train.toml"
    path.write_text("[train]\nmax_steps = 10\nmodel = { d_model = 64 }\n", encoding="utf-8")
    cfg = load_train_config(path, ["max_steps=20", "model.n_layer=2", "device=cpu", "betas=[0.9, 0.95]"])
    assert (cfg.max_steps, cfg.model, cfg.device, cfg.betas) == (
        20,
        {"d_model": 64, "n_layer": 2},
        "cpu",
        (0.9, 0.95),
    )
    with pytest.raises(ConfigError, match="expected key=value"):
        load_train_config(None, ["max_steps"])
    with pytest.raises(ConfigError, match="max_steps is a value, not a table"):
        load_train_config(path, ["max_steps.x=1"])


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["segment.max_tokenz=3"], "segment.max_tokenz"),
        (["nosection.x=1"], "nosection"),
        (["segment.max_tokens=many"], "segment.max_tokens"),
        (["max_tokens=3"], "section.key=value"),
    ],
)
def test_bad_keys_are_named(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


def test_bad_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[segment\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bad.toml: not valid TOML"):
        load_config(bad)
