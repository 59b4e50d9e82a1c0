"""What a training run is configured by: `TrainConfig`, read from TOML plus key=value overrides, and
the schedules it sets (learning rate and, with progressive eviction, the memory length per step)."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

from pydantic import Field

from pipeline.config import Options, apply_overrides


class TrainConfig(Options):
    """Everything a training run depends on; stored in every checkpoint."""

    data_dir: str = "runs/lm_data"  # written by `ldx train prepare`
    out_dir: str = "runs/lm"
    corpora: list[str] | None = None  # None = every corpus of data_dir
    # the streams without their <blk_X> tokens (block types stay on the tokens: txl.streams.stream_variant)
    strip_block_tokens: bool = False
    model: dict = Field(default_factory=dict)  # TransformerXLConfig fields (vocab_size comes from the data)
    seg_len: int = 128
    mem_len: int = 128
    batch_size: int = 8  # lanes of the global batch (all processes together)
    accum_steps: int = 1  # the lanes are split into this many chunks per optimizer step
    max_steps: int = 4000
    max_minutes: float | None = None  # stop (and checkpoint) after this much wall time; resumable
    lr: float = 5e-4
    min_lr_ratio: float = 0.1
    warmup_steps: int = 200
    weight_decay: float = 0.01
    betas: tuple[float, float] = (0.9, 0.98)
    grad_clip: float = 0.25
    log_every: int = 10
    eval_every: int = 250
    eval_docs_per_corpus: int = 4
    eval_tokens_per_corpus: int = 20_000
    ckpt_every: int = 50
    seed: int = 0
    threads: int = 2
    device: str = "auto"
    consistency_beta: float = 0.0  # β of the cache-consistency term β·‖state_i − state_{i−1}‖²; 0 = off
    evict: bool = False  # progressive cache eviction: full memory early, shrinking later
    evict_min_frac: float = 0.25  # memory kept at the end of the eviction schedule
    inject_k: int = 0  # retrieved windows per lane and step (own document, out of memory); 0 = off
    inject_states: int = 16  # pooled states per layer kept of each past window (the store's P)
    inject_max_windows: int = 256  # past windows kept per lane; the oldest go first
    # the layers that keep and read retrieved states (negative: from the top), as a store keeps them
    # (retrieval.state_layers); None = every layer, as the shipped model was trained
    inject_layers: list[int] | None = None
    export_fp16: str | None = None  # write the final model here (fp16) with txl.checkpoint.save_model
    # warm start: a fresh run (nothing to resume) begins from this shipped checkpoint's weights (same
    # architecture; the optimizer, schedule and streams start anew); its step and tokens carry over
    init_from: str | None = None
    plot: bool = True  # metrics.csv and curves.png at the end of a run


def load_train_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """A TrainConfig from a TOML file (its [train] table or the top level) plus key=value overrides."""
    data: dict = {}
    if path is not None:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        data = raw.get("train", raw)
    return TrainConfig.model_validate(apply_overrides(data, overrides, example="max_steps=500"))


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to 1, then cosine decay to `min_lr_ratio` at `max_steps`."""
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    progress = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps))
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def memory_len(step: int, cfg: TrainConfig) -> int:
    """The memory length used at `step`. With progressive eviction: all of it for the first 30% of
    training, then shrinking linearly to `evict_min_frac` of it at 70%, and that to the end."""
    if not cfg.evict:
        return cfg.mem_len
    p = step / max(1, cfg.max_steps)
    frac = 1.0 if p < 0.3 else max(cfg.evict_min_frac, 1 - (1 - cfg.evict_min_frac) * (p - 0.3) / 0.4)
    return max(1, round(cfg.mem_len * frac))
