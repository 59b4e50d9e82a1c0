"""`ldx train reader`, `ldx train polar`: training the reader and its yes-no decider.

What the commands run is imported inside them, on lines marked `# start-up` (retrieval.reader imports
torch, ~1.4 s, which every other `ldx` command would pay; see flows/cli_retrieval.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from flows.cli import app  # noqa: F401  (imported for its side effect order: the root app exists first)
from flows.cli_common import existing_path, fail, train_app


@train_app.command("reader")
def train_reader_cmd(
    qa: Annotated[Path, typer.Option("--qa", help="SQuAD-2.0-layout file; its training split is read.")],
    checkpoint: Annotated[
        str | None, typer.Option(help="Encoder checkpoint; default: the shipped one.")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Head file; default: data/models/reader.pt.")] = None,
    contexts: Annotated[
        int | None, typer.Option(help="Training contexts to encode (CPU cost); default all.")
    ] = None,
    eval_contexts: Annotated[int | None, typer.Option(help="Held-apart contexts read at the end.")] = None,
    cuad: Annotated[
        Path | None, typer.Option(help="Also CUAD's training contracts (folder of cuad_*.jsonl.gz).")
    ] = None,
    cuad_contracts: Annotated[int, typer.Option(help="CUAD training contracts to encode.")] = 40,
    init: Annotated[
        Path | None, typer.Option(help="Start from this head (fine-tuning) instead of afresh.")
    ] = None,
    epochs: int = 20,
    minutes: Annotated[float, typer.Option(help="Training time budget (encoding not counted).")] = 40.0,
    lr: float = 2e-3,
    threads: Annotated[int, typer.Option(help="Torch intra-op threads.")] = 1,
    end_to_end: Annotated[
        bool,
        typer.Option(
            help="Fine-tune the encoder's layers with the head (from --init, else the shipped head)."
        ),
    ] = False,
    encoder_lr: Annotated[float, typer.Option(help="End to end: the encoder's learning rate.")] = 1e-4,
) -> None:
    """Train the reader head on the frozen encoder's states (or, with --end-to-end, the encoder's layers
    with it); prints the held-apart metrics."""
    import torch  # start-up: torch

    from retrieval.reader.finetune import FinetuneConfig, finetune_reader  # start-up: torch
    from retrieval.reader.runtime import READER_FILE  # start-up: torch
    from retrieval.reader.train import train_reader  # start-up: torch

    for p in [qa, *([cuad] if cuad else []), *([init] if init else [])]:
        existing_path(p)
    torch.set_num_threads(threads)
    try:
        if end_to_end:  # --lr is the head's
            cfg = FinetuneConfig(epochs, minutes, lr, encoder_lr, threads=threads)
            metrics = finetune_reader(
                qa, out or READER_FILE, init or READER_FILE, checkpoint, cuad, cuad_contracts, cfg
            )
            print(json.dumps(metrics["calibration"]))
        else:
            args = (contexts, eval_contexts, cuad, cuad_contracts, init, epochs, minutes, lr)
            metrics = train_reader(qa, out or READER_FILE, checkpoint, *args)
    except ValueError as e:
        fail(str(e))
    print(json.dumps(metrics["heldout"], ensure_ascii=False, indent=1))


@train_app.command("polar")
def train_polar_cmd(
    qa: Annotated[Path, typer.Option("--qa", help="SQuAD-2.0-layout file; its training split is read.")],
    reader: Annotated[Path | None, typer.Option(help="Reader head; default data/models/reader.pt.")] = None,
    checkpoint: Annotated[
        str | None, typer.Option(help="Encoder checkpoint; default: the shipped one.")
    ] = None,
) -> None:
    """Fit the yes-no decider of a reader (YES / NO / no answer to yes-no questions) on the yes-no
    questions of the file's training contexts; writes polar.json beside the reader and prints its
    validation accuracy beside the reader head's own."""
    import torch  # start-up: torch

    from retrieval.reader.runtime import READER_FILE  # start-up: torch
    from retrieval.reader.train_polar import fit_polar  # start-up: torch

    existing_path(qa)
    existing_path(reader or READER_FILE)
    torch.set_num_threads(1)
    try:
        metrics = fit_polar(qa, reader or READER_FILE, checkpoint)
    except ValueError as e:
        fail(str(e))
    print(json.dumps(metrics, indent=1))
