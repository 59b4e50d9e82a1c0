"""Evaluating a checkpoint on documents as `ldx eval lm` does: load it with its tokenizer, read the files,
measure each memory setting (txl.evaluate.evaluate_lm), and add the long-range subsets (distant recall,
connective clauses) with each setting's paired difference to the one before it (txl.lm_metrics)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from pipeline.config import ParseConfig, SegmentConfig
from pipeline.paths import TOKENIZER_FILE
from pipeline.records import sha256_file
from pipeline.tokenizer import load_tokenizer
from txl.checkpoint import load_model
from txl.config import ModelConfig
from txl.evaluate import SETTINGS, encode_paths, evaluate_lm
from txl.lm_metrics import add_subsets, distant_threshold, long_range_report, subset_masks
from txl.windows import PastWindows


def tokenizer_warning(checkpoint: Path, extra: dict, tokenizer_path: str | None) -> str | None:
    """A note when the configured tokenizer is not the one the checkpoint was trained with."""
    tok_file = Path(tokenizer_path or TOKENIZER_FILE)
    tok_file = tok_file / "tokenizer.json" if tok_file.is_dir() else tok_file
    want = extra.get("tokenizer_sha256")
    if want and sha256_file(tok_file) != want:
        return f"{tok_file} is not the tokenizer {checkpoint.name} was trained with (sha256 {want[:12]}…)"
    return None


def evaluate_checkpoint(
    checkpoint: Path,
    paths: list[Path],
    settings: list[str],
    parse: ParseConfig,
    segment: SegmentConfig,
    model_config: ModelConfig,
    retrieve_k: int,
    past_windows: Callable[[], PastWindows] = PastWindows,
    seg_len: int | None = None,
    lanes: int = 8,
    max_docs: int | None = None,
) -> dict:
    """{"checkpoint", "documents", "errors" (source, message) of files skipped, "warnings", "settings":
    evaluate_lm's figures with the long-range subsets, "distant_threshold", "paired": each setting minus
    the one before it, with document-bootstrap intervals}. `model_config` gives mem_len and clamp_len (None: the checkpoint's own);
    seg_len None is the training one. An unknown setting, or no readable document, raises ValueError."""
    bad = [s for s in settings if s not in SETTINGS]
    if bad:
        raise ValueError(f"unknown setting {', '.join(bad)}; choose from {', '.join(SETTINGS)}")
    model, extra = load_model(checkpoint)
    tokenizer = load_tokenizer(segment.tokenizer)
    warning = tokenizer_warning(checkpoint, extra, segment.tokenizer)
    docs, errors = encode_paths(paths, tokenizer, parse, segment, max_docs)
    if not docs:
        raise ValueError(
            "no document could be read from the given paths" + (f" ({errors[0][1]})" if errors else "")
        )
    token_nll: dict = {}
    result = evaluate_lm(
        model,
        docs,
        seg_len or int(extra.get("seg_len", 128)),
        settings,
        special=torch.tensor(sorted(tokenizer.special_ids)),
        n_lanes=lanes,
        mem_len=model_config.mem_len,
        clamp_len=model_config.clamp_len,
        retrieve_k=retrieve_k,
        past_windows=past_windows,
        token_nll=token_nll,
    )
    threshold = distant_threshold(model, model_config.mem_len)
    masks = subset_masks(docs, threshold, tokenizer.special_ids, tokenizer, segment.connectives)
    report = long_range_report(docs, token_nll, masks, list(zip(settings[1:], settings[:-1], strict=True)))
    for setting, rows in result.items():
        add_subsets(rows, report["settings"][setting])
    return {
        "checkpoint": str(checkpoint),
        "documents": len(docs),
        "errors": errors,
        "warnings": [warning] if warning else [],
        "distant_threshold": threshold,
        "settings": result,
        "paired": report["paired"],
    }
