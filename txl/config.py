"""Run-time options of the model subsystem (which checkpoint, where, in which precision)."""

from __future__ import annotations

from pathlib import Path

from pipeline.config import Options

# The shipped language model, the default encoder of every model stage
SHIPPED_CHECKPOINT = Path(__file__).resolve().parents[1] / "data" / "models" / "txl_lm.pt"


class ModelConfig(Options):
    checkpoint: str | None = None  # None = the shipped checkpoint in data/models/
    device: str = "auto"  # "auto", "cpu", "cuda", "cuda:1" ...
    # "auto": bf16 autocast on CUDA and on CPUs with AMX bf16 units (txl.model.cpu_has_bf16_matmul), fp32
    # elsewhere; "float32"; "bfloat16". Role-head accuracy was the same either way (0.769 / 0.526 F1)
    dtype: str = "auto"
    # torch intra-op threads of the model stages; None = torch's default (every core), the fastest on a
    # machine of its own (measured). Where other work shares the cores set 1: threads that wait for a
    # busy core make each step many times slower, not a little.
    threads: int | None = None
    mem_len: int | None = None  # None = the checkpoint's own
    clamp_len: int | None = None
