"""What a training run leaves on disk: atomic checkpoints of its whole state, the metrics log (JSON
lines that a resume trims back to the checkpoint), the curves at the end, the fp16 export of the model;
and the progress line on the terminal."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import torch
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from pipeline.store import atomic_write_bytes, atomic_write_text
from txl.checkpoint import save_model

STATE_FILE = "train_state.pt"
METRICS_FILE = "metrics.jsonl"


def save_state(path: Path, state: dict) -> None:
    buf = io.BytesIO()
    torch.save(state, buf)
    atomic_write_bytes(path, buf.getvalue())


def load_state(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)


class MetricsLog:
    """JSON lines of training and evaluation metrics; on resume, lines past the checkpoint are dropped
    so the log matches the run as if it had never stopped."""

    def __init__(self, path: Path, resume_step: int | None):
        self.path = path
        if resume_step is None:
            atomic_write_text(path, "")
        elif path.exists():
            keep = [
                ln for ln in path.read_text().splitlines() if ln and json.loads(ln)["step"] <= resume_step
            ]
            atomic_write_text(path, "".join(ln + "\n" for ln in keep))

    def write(self, record: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def records(self) -> list[dict]:
        return [json.loads(ln) for ln in self.path.read_text().splitlines() if ln]


def write_curves(metrics: list[dict], out_dir: Path) -> None:
    """metrics.csv and curves.png (training loss and held-apart perplexity against tokens seen)."""
    # only the end of a run plots; the backend is chosen before pyplot loads
    # lazy, a start-up cost: matplotlib.pyplot adds ~0.37 s and pandas ~0.26 s (measured)
    import matplotlib

    matplotlib.use("Agg")
    # lazy, a start-up cost: as above
    import matplotlib.pyplot as plt

    # lazy, a start-up cost: as above
    import pandas as pd

    train = pd.DataFrame([m for m in metrics if m["kind"] == "train"])
    evals = pd.DataFrame([m for m in metrics if m["kind"] == "eval"])
    pd.DataFrame(metrics).to_csv(out_dir / "metrics.csv", index=False)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    if not train.empty:
        axes[0].plot(train["tokens"] / 1e6, train["loss"], lw=1)
    axes[0].set(xlabel="tokens seen (M)", ylabel="training NLL (nats/token)", title="training loss")
    if not evals.empty:
        for col in sorted(c for c in evals.columns if c.startswith("ppl/")):
            axes[1].plot(evals["tokens"] / 1e6, evals[col], marker="o", ms=3, label=col[4:])
        axes[1].set_yscale("log")
        axes[1].legend(fontsize=7)
    axes[1].set(xlabel="tokens seen (M)", ylabel="perplexity (memory on)", title="held-apart perplexity")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(out_dir / "curves.png", buf.getvalue())


def export_fp16(module, path: Path, extra: dict) -> None:
    """The model's weights in float16 (half the disk), loadable by txl.checkpoint.load_model."""
    save_model(path, copy.deepcopy(module).half(), extra)


def progress_bar(enabled: bool) -> Progress:
    """The training run's progress line (step of max_steps, loss, tokens/s); off on other ranks."""
    return Progress(
        TextColumn("[bold]train"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.3f}"),
        TextColumn("{task.fields[tps]:.0f} tok/s"),
        TimeRemainingColumn(),
        disable=not enabled,
    )
