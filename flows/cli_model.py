"""`ldx train …` and `ldx eval lm`: the model work's commands (registered on the root app and eval_app)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Annotated

import typer

from flows.cli import app
from flows.cli_common import ConfigOpt, SetOpt, console, eval_app, existing_path, fail, resolve_config

train_app = typer.Typer(help="Train the Transformer-XL language model on document-ordered streams.")
app.add_typer(train_app, name="train")

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


@train_app.command("prepare")
def train_prepare(
    out: Annotated[Path, typer.Option("--out", help="Folder for the stream files (git-ignored, e.g. runs/).")] = Path(
        "runs/lm_data"
    ),
    data_root: Annotated[Path, typer.Option("--data-root", help="The shared corpora folder.")] = SHARED_DATA,
    corpus: Annotated[
        list[str] | None, typer.Option("--corpus", help="Only these corpora (names of txl.corpora.DEFAULT_CORPORA).")
    ] = None,
    max_docs: Annotated[int | None, typer.Option(help="At most this many documents per corpus.")] = None,
    holdout: Annotated[float, typer.Option(help="Fraction of each corpus's documents held apart.")] = 0.05,
    seed: Annotated[int, typer.Option(help="Seed of the held-apart choice.")] = 0,
    max_train_docs: Annotated[
        list[str] | None,
        typer.Option(help="NAME=N: at most N training documents of that corpus (a seeded sample); repeatable."),
    ] = None,
) -> None:
    """Parse, segment and tokenize the shared corpora into per-corpus stream files with a held-apart split."""
    from txl.corpora import DEFAULT_CORPORA, prepare

    existing_path(data_root, "folder")
    chosen = tuple(c for c in DEFAULT_CORPORA if not corpus or c.name in corpus)
    unknown = set(corpus or []) - {c.name for c in DEFAULT_CORPORA}
    if unknown:
        fail(f"unknown corpus {', '.join(sorted(unknown))}; known: {', '.join(c.name for c in DEFAULT_CORPORA)}")
    caps = {}
    for item in max_train_docs or []:
        name, _, n = item.partition("=")
        if not n.isdigit():
            fail(f"--max-train-docs {item!r}: expected NAME=N, e.g. en_ewca=60")
        caps[name] = int(n)
    manifest = prepare(out, data_root.resolve(), chosen, holdout=holdout, seed=seed, max_docs=max_docs,
                       max_train_docs=caps,
                       log=lambda line: console.print(line, highlight=False, markup=False))
    console.print(f"[green]wrote[/] {out} ({len(manifest['corpora'])} corpora)")


@train_app.command("run")
def train_run(
    config: Annotated[Path | None, typer.Option("--config", "-c", help="TOML training config ([train] table).")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", "-s", help="Override one key: key=value, e.g. max_steps=500.")
    ] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Start over instead of resuming out_dir's checkpoint.")] = False,
    nproc: Annotated[int, typer.Option(help="Processes (DDP through torchrun; gloo on CPU, NCCL on GPUs).")] = 1,
) -> None:
    """Train (resuming from out_dir's checkpoint unless --fresh); progress, metrics.jsonl, curves.png."""
    from txl.train import Trainer, load_train_config

    if config is not None:
        existing_path(config)
    try:
        cfg = load_train_config(config, set_)
    except Exception as e:  # pydantic ValidationError, TOML errors: one line
        fail(f"bad training config: {e}".splitlines()[0])
    existing_path(Path(cfg.data_dir) / "manifest.json")
    if fresh:
        (Path(cfg.out_dir) / "train_state.pt").unlink(missing_ok=True)
    if nproc > 1:
        cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc}", "-m", "txl.train"]
        cmd += [str(config)] if config else ["-"]
        cmd += list(set_ or [])
        raise typer.Exit(subprocess.call(cmd, env={**os.environ}))
    records = Trainer(cfg).run()
    last = [r for r in records if r["kind"] == "eval"][-1:] or records[-1:]
    console.print(f"[green]done[/] at step {records[-1]['step'] if records else 0}: {json.dumps(last)}")


@train_app.command("keys")
def train_keys(
    checkpoint: Annotated[Path | None, typer.Option(help="Encoder; default data/models/txl_lm.pt.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Key head file; default data/models/keys.pt.")] = None,
    data_root: Annotated[Path, typer.Option("--data-root", help="The shared corpora folder.")] = SHARED_DATA,
    max_train_docs: Annotated[int | None, typer.Option(help="Training records per source at most.")] = None,
    time_budget: Annotated[float | None, typer.Option(help="Seconds of training at most (best epoch kept).")] = None,
    dim: Annotated[int, typer.Option(help="Key dimension.")] = 256,
    device: Annotated[str, typer.Option(help="cpu, cuda, ...")] = "cpu",
) -> None:
    """Train the retrieval key head on the encoder's frozen states (retrieval/train_keys.py): prints the
    validation MRR / recall of the raw keys and of the head."""
    from retrieval.train_keys import KeyTrainConfig
    from retrieval.train_keys import train_keys as run_training
    from txl.keys import KEYS_FILE, FitConfig

    existing_path(data_root, "folder")
    if checkpoint is not None:
        existing_path(checkpoint)
    cfg = KeyTrainConfig(data=str(data_root.resolve()), max_train_docs=max_train_docs, device=device,
                         fit=FitConfig(dim=dim, time_budget_s=time_budget))
    report = run_training(str(checkpoint) if checkpoint else None, out or KEYS_FILE, cfg)
    report.pop("epochs")
    console.print_json(json.dumps(report, ensure_ascii=False, default=str))


@eval_app.command("lm")
def eval_lm(
    paths: Annotated[list[Path], typer.Argument(help="Documents: PDFs, text, XML, JSONL corpora ...")],
    checkpoint: Annotated[Path | None, typer.Option(help="Model file; default: the shipped one.")] = None,
    settings: Annotated[str, typer.Option(help="Comma-separated: none, memory, retrieved.")] = "none,memory,retrieved",
    mem_len: Annotated[int | None, typer.Option(help="Evaluation memory length (default: the model's).")] = None,
    clamp_len: Annotated[int | None, typer.Option(help="Relative-distance clamp (default: the model's).")] = None,
    seg_len: Annotated[int | None, typer.Option(help="Window length (default: the training one).")] = None,
    lanes: Annotated[int, typer.Option(help="Documents evaluated side by side.")] = 8,
    max_docs: Annotated[int | None, typer.Option(help="At most this many documents in all.")] = None,
    threads: Annotated[int, typer.Option(help="Torch intra-op threads (1 is fastest on a busy shared machine).")] = 1,
    store: Annotated[
        bool, typer.Option("--store/--no-store", help="Retrieve from a retrieval SegmentStore (pooled states) "
                           "or from txl's in-memory stand-in (full states).")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Perplexity and bits per character with memory off, on, and on + retrieved memory."""
    import torch

    from flows.lm_store import StorePastWindows
    from pipeline.records import sha256_file
    from pipeline.tokenizer import DEFAULT_PATH, load_tokenizer
    from txl.checkpoint import load_model
    from txl.config import SHIPPED_CHECKPOINT
    from txl.evaluate import PastWindows, encode_paths, evaluate_lm

    for p in paths:
        existing_path(p)
    cfg = resolve_config(config, set_)
    chosen = [s.strip() for s in settings.split(",") if s.strip()]
    bad = [s for s in chosen if s not in ("none", "memory", "retrieved")]
    if bad:
        fail(f"unknown setting {', '.join(bad)}; choose from none, memory, retrieved")
    ckpt = checkpoint or (Path(cfg.model.checkpoint) if cfg.model.checkpoint else SHIPPED_CHECKPOINT)
    existing_path(ckpt, "checkpoint")
    torch.set_num_threads(threads)
    model, extra = load_model(ckpt)
    tokenizer = load_tokenizer(cfg.segment.tokenizer)
    tok_file = Path(cfg.segment.tokenizer or DEFAULT_PATH)
    tok_file = tok_file / "tokenizer.json" if tok_file.is_dir() else tok_file
    warnings = []
    want = extra.get("tokenizer_sha256")
    if want and sha256_file(tok_file) != want:
        warnings.append(f"{tok_file} is not the tokenizer {ckpt.name} was trained with (sha256 {want[:12]}…)")
    docs, errors = encode_paths(paths, tokenizer, cfg.parse, cfg.segment, max_docs)
    if not as_json:
        for message in warnings + [f"skipped: {m}" for _, m in errors]:
            console.print(message, highlight=False, markup=False)
    if not docs:
        fail("no document could be read from the given paths" + (f" ({errors[0][1]})" if errors else ""))
    with tempfile.TemporaryDirectory(prefix="ldx-eval-") as tmp:

        def store_windows() -> StorePastWindows:
            return StorePastWindows(Path(tmp) / uuid.uuid4().hex, cfg.retrieval)

        past = store_windows if store else PastWindows
        result = evaluate_lm(
            model, docs, seg_len or int(extra.get("seg_len", 128)), chosen,
            special=torch.tensor(sorted(tokenizer.special_ids)), n_lanes=lanes,
            mem_len=mem_len if mem_len is not None else cfg.model.mem_len,
            clamp_len=clamp_len if clamp_len is not None else cfg.model.clamp_len,
            retrieve_k=cfg.retrieval.inject_k, past_windows=past,
        )
    if as_json:
        print(json.dumps({"checkpoint": str(ckpt), "documents": len(docs), "errors": errors, "warnings": warnings,
                          "settings": result}))
        return
    from rich.table import Table

    table = Table(title=f"{len(docs)} documents, {ckpt.name}")
    for col in ("setting", "corpus", "tokens", "chars", "NLL", "perplexity", "bpc", "ppl after connective"):
        table.add_column(col)
    for setting, rows in result.items():
        for corpus, r in rows.items():
            table.add_row(setting, corpus, str(r["tokens"]), str(r["chars"]), f"{r['nll']:.3f}", f"{r['ppl']:.2f}",
                          f"{r['bpc']:.3f}", f"{r['after_connective']['ppl']:.2f} ({r['after_connective']['tokens']})")
    console.print(table)
