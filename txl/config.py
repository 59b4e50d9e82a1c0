"""Run-time options of the model subsystem (which checkpoint, where, in which precision)."""

from __future__ import annotations

from pipeline.config import Options


class ModelConfig(Options):
    checkpoint: str | None = None  # None = the shipped checkpoint in data/models/
    device: str = "auto"  # "auto", "cpu", "cuda", "cuda:1" ...
    dtype: str = "auto"  # "auto" (bf16 autocast on CUDA, fp32 on CPU), "float32", "bfloat16"
    threads: int | None = None  # torch intra-op threads for the model stages; None = torch's default.
    # One is faster where other work shares the cores: idle threads spin while waiting for each other.
    mem_len: int | None = None  # None = the checkpoint's own
    clamp_len: int | None = None
