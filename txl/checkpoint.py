"""Save and load a TransformerXLLM with its config: plain tensors and builtins only, so loading works
with torch.load(weights_only=True)."""

from __future__ import annotations

import io
from dataclasses import asdict
from pathlib import Path

import torch

from pipeline.store import atomic_write_bytes
from txl.model import TransformerXLConfig, TransformerXLLM


def save_model(path: str | Path, model: TransformerXLLM, extra: dict | None = None) -> None:
    """`extra` holds anything else the caller wants back (step, tokenizer name, metrics): builtins and
    tensors only."""
    buf = io.BytesIO()
    torch.save({"config": asdict(model.cfg), "state_dict": model.state_dict(), "extra": extra or {}}, buf)
    atomic_write_bytes(Path(path), buf.getvalue())


def load_model(path: str | Path, device: str | torch.device = "cpu") -> tuple[TransformerXLLM, dict]:
    """-> (model in eval mode on `device`, extra)."""
    blob = torch.load(Path(path), map_location=device, weights_only=True)
    model = TransformerXLLM(TransformerXLConfig(**blob["config"]))
    model.load_state_dict(blob["state_dict"])
    return model.to(device).eval(), blob["extra"]
