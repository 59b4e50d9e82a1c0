"""Run-time options of the model subsystem (which checkpoint, where, in which precision)."""

from __future__ import annotations

import os

from pipeline.config import Options


class ModelConfig(Options):
    checkpoint: str | None = None  # None = the shipped checkpoint in data/models/
    device: str = "auto"  # "auto", "cpu", "cuda", "cuda:1" ...
    # "auto": bf16 autocast on CUDA, fp32 on CPU (txl.model.autocast says why); "float32"; "bfloat16"
    dtype: str = "auto"
    # torch intra-op threads of each model stage of `ldx run`. None = half the cores each: the index
    # process and the predict stage run side by side, and more threads than cores is ruinous (300
    # judgments on 2 cores: 358 s with two threads each, 86 s with one). Where other work shares the
    # cores set fewer.
    threads: int | None = None
    mem_len: int | None = None  # None = the checkpoint's own
    clamp_len: int | None = None

    def stage_threads(self, alone: bool = False) -> int:
        """The intra-op threads a model stage of `ldx run` uses; `alone`: no other stage works beside it
        any more (the index process once the batches are done), so it may take every core."""
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 2
        return self.threads or (cores if alone else max(1, cores // 2))
