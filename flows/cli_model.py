"""`ldx train …` and `ldx eval lm`: the model work's commands (registered on train_app and eval_app).

txl/ and retrieval/ import torch, which adds ~1.4 s to the start-up of every `ldx` command (0.4 s
without it; measured with `python -X importtime` and timed imports after `import flows.cli`): each
command imports them itself, on lines marked `# start-up`.
"""

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
from rich.table import Table

from flows.cli import app  # noqa: F401  (the root app exists first)
from flows.cli_common import (
    ConfigOpt,
    SetOpt,
    console,
    eval_app,
    existing_path,
    fail,
    resolve_config,
    train_app,
)
from pipeline.paths import SHARED_DATA, SHIPPED_CHECKPOINT
from txl.pooling import KEY_LAYER, KEY_LR, KEY_POOLING, KEY_POOLINGS
from txl.train_config import load_train_config


@train_app.command("prepare")
def train_prepare(
    out: Annotated[
        Path, typer.Option("--out", help="Folder for the stream files (git-ignored, e.g. runs/).")
    ] = Path("runs/lm_data"),
    data_root: Annotated[Path, typer.Option("--data-root", help="The shared corpora folder.")] = SHARED_DATA,
    corpus: Annotated[
        list[str] | None,
        typer.Option("--corpus", help="Only these corpora (names of txl.corpora.DEFAULT_CORPORA)."),
    ] = None,
    max_docs: Annotated[int | None, typer.Option(help="At most this many documents per corpus.")] = None,
    holdout: Annotated[float, typer.Option(help="Fraction of each corpus's documents held apart.")] = 0.05,
    seed: Annotated[int, typer.Option(help="Seed of the held-apart choice.")] = 0,
    max_train_docs: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=N: at most N training documents of that corpus (a seeded sample); repeatable."
        ),
    ] = None,
) -> None:
    """Parse, segment and tokenize the shared corpora into per-corpus stream files with a held-apart split."""
    from txl.corpora import DEFAULT_CORPORA, prepare  # start-up: torch

    existing_path(data_root, "folder")
    chosen = tuple(c for c in DEFAULT_CORPORA if not corpus or c.name in corpus)
    unknown = set(corpus or []) - {c.name for c in DEFAULT_CORPORA}
    if unknown:
        fail(
            f"unknown corpus {', '.join(sorted(unknown))}; known: {', '.join(c.name for c in DEFAULT_CORPORA)}"
        )
    caps = {}
    for item in max_train_docs or []:
        name, _, n = item.partition("=")
        if not n.isdigit():
            fail(f"--max-train-docs {item!r}: expected NAME=N, e.g. en_ewca=60")
        caps[name] = int(n)
    manifest = prepare(
        out,
        data_root.resolve(),
        chosen,
        holdout=holdout,
        seed=seed,
        max_docs=max_docs,
        max_train_docs=caps,
        log=lambda line: console.print(line, highlight=False, markup=False),
    )
    console.print(f"[green]wrote[/] {out} ({len(manifest['corpora'])} corpora)")


@train_app.command("run")
def train_run(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help=r"TOML training config (its \[train] table).")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", "-s", help="Override one key: key=value, e.g. max_steps=500.")
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start over instead of resuming out_dir's checkpoint.")
    ] = False,
    nproc: Annotated[
        int, typer.Option(help="Processes (DDP through torchrun; gloo on CPU, NCCL on GPUs).")
    ] = 1,
) -> None:
    """Train (resuming from out_dir's checkpoint unless --fresh); progress, metrics.jsonl, curves.png."""
    from txl.launch import run_training  # start-up: torch

    if config is not None:
        existing_path(config)
    try:
        cfg = load_train_config(config, set_)
    except Exception as e:  # pydantic ValidationError, TOML errors: one line
        fail(f"bad training config: {e}".splitlines()[0])
    existing_path(Path(cfg.data_dir) / "manifest.json")
    if fresh:
        (Path(cfg.out_dir) / "train_state.pt").unlink(missing_ok=True)
    if nproc > 1:  # every rank runs this same command, alone (nproc 1) inside torchrun's group
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            f"--nproc-per-node={nproc}",
            "-m",
            "flows",
            "train",
            "run",
            *(["--config", str(config)] if config else []),
        ]
        cmd += [arg for item in set_ or [] for arg in ("--set", item)]
        raise typer.Exit(subprocess.call(cmd, env={**os.environ}))
    records = run_training(cfg)
    last = [r for r in records if r["kind"] == "eval"][-1:] or records[-1:]
    console.print(f"[green]done[/] at step {records[-1]['step'] if records else 0}: {json.dumps(last)}")


KeyLayerOpt = Annotated[
    int,
    typer.Option(help="States the head reads: 0 the embedded input, i the input of layer i, -1 the last."),
]


def _key_pooling(pooling: str) -> str:
    if pooling not in KEY_POOLINGS:
        raise typer.BadParameter(f"{pooling!r} is not one of {', '.join(KEY_POOLINGS)}")
    return pooling


KeyPoolingOpt = Annotated[
    str,
    typer.Option(
        help="How they are pooled: mean, idf (weighted by inverse document frequency) or bm25 (idf with "
        "BM25's term-frequency saturation).",
        callback=_key_pooling,
    ),
]


@train_app.command("keys")
def train_keys(
    checkpoint: Annotated[Path | None, typer.Option(help="Encoder; default data/models/txl_lm.pt.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Key head file; default data/models/keys.pt.")
    ] = None,
    data_root: Annotated[Path, typer.Option("--data-root", help="The shared corpora folder.")] = SHARED_DATA,
    max_train_docs: Annotated[int | None, typer.Option(help="Training records per source at most.")] = None,
    time_budget: Annotated[
        float | None, typer.Option(help="Seconds of training at most (best epoch kept).")
    ] = None,
    dim: Annotated[int, typer.Option(help="Key dimension.")] = 256,
    hidden: Annotated[
        int, typer.Option(help="Width of the head's residual MLP (0: the linear head, as shipped).")
    ] = 0,
    lr: Annotated[float, typer.Option(help="The head's AdamW learning rate.")] = KEY_LR,
    sources: Annotated[
        str, typer.Option(help="Pair sources, comma-separated: clcr, cjrc, cuad, judge (judge_criminal).")
    ] = "clcr,cjrc,cuad",
    case_passages: Annotated[int, typer.Option(help="First passages of a case read for its pairs.")] = 3,
    far_pairs: Annotated[
        bool, typer.Option("--far-pairs", help="Pairs: a case's facts passage and its reasoning passage.")
    ] = False,
    facts_pairs: Annotated[
        bool, typer.Option("--facts-pairs", help="Pairs: a case's facts (alone) and its reasoning passage.")
    ] = False,
    charge_pairs: Annotated[
        int, typer.Option(help="Pairs per case: its facts and the reasoning of a case of its cause.")
    ] = 0,
    layer: KeyLayerOpt = KEY_LAYER,
    pooling: KeyPoolingOpt = KEY_POOLING,
    raw_cache: Annotated[
        Path | None, typer.Option(help="Raw keys cached here (.npz), reused by a rerun on the same pairs.")
    ] = None,
    device: Annotated[str, typer.Option(help="cpu, cuda, ...")] = "cpu",
) -> None:
    """Train the key head on the encoder's frozen states (retrieval/train_keys.py); prints validation MRR."""
    from retrieval.train_keys import KeyTrainConfig  # start-up: torch
    from retrieval.train_keys import train_keys as run_training  # start-up: torch
    from txl.keys import KEYS_FILE, FitConfig  # start-up: torch

    existing_path(data_root, "folder")
    if checkpoint is not None:
        existing_path(checkpoint)
    cfg = KeyTrainConfig(
        data=str(data_root.resolve()),
        sources=_pair_sources(sources, case_passages),
        max_train_docs=max_train_docs,
        case_passages=case_passages,
        far_pairs=far_pairs,
        facts_pairs=facts_pairs,
        charge_pairs=charge_pairs,
        layer=layer,
        pooling=pooling,
        device=device,
        raw_cache=str(raw_cache) if raw_cache else None,
        fit=FitConfig(dim=dim, hidden=hidden, time_budget_s=time_budget, lr=lr),
    )
    report = run_training(str(checkpoint) if checkpoint else None, out or KEYS_FILE, cfg)
    report.pop("epochs")
    console.print_json(json.dumps(report, ensure_ascii=False, default=str))


def _pair_sources(sources: str, case_passages: int) -> tuple[str, ...]:
    """The key-training sources named (each known), with a usable --case-passages; else a one-line error."""
    from retrieval.key_pairs import ADDERS  # start-up: torch, via retrieval.eval.search

    names = tuple(s.strip() for s in sources.split(",") if s.strip())
    bad = [s for s in names if s not in ADDERS]
    if bad or not names:
        fail(f"--sources: unknown {', '.join(bad) or '(none given)'}; choose from {', '.join(ADDERS)}")
    if case_passages < 2:
        fail("--case-passages: at least 2 (a case's title pairs with its second passage)")
    return names


@eval_app.command("lm")
def eval_lm(
    paths: Annotated[list[Path], typer.Argument(help="Documents: PDFs, text, XML, JSONL corpora ...")],
    checkpoint: Annotated[Path | None, typer.Option(help="Model file; default: the shipped one.")] = None,
    settings: Annotated[
        str, typer.Option(help="Comma-separated: none, memory, retrieved.")
    ] = "none,memory,retrieved",
    mem_len: Annotated[
        int | None, typer.Option(help="Evaluation memory length (default: the model's).")
    ] = None,
    clamp_len: Annotated[
        int | None, typer.Option(help="Relative-distance clamp (default: the model's).")
    ] = None,
    seg_len: Annotated[int | None, typer.Option(help="Window length (default: the training one).")] = None,
    lanes: Annotated[int, typer.Option(help="Documents evaluated side by side.")] = 8,
    max_docs: Annotated[int | None, typer.Option(help="At most this many documents in all.")] = None,
    threads: Annotated[
        int, typer.Option(help="Torch intra-op threads (1 is fastest on a busy shared machine).")
    ] = 1,
    store: Annotated[
        bool,
        typer.Option(
            "--store/--no-store",
            help="Retrieve from a retrieval SegmentStore (pooled states) "
            "or from txl's in-memory stand-in (full states).",
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Perplexity and bits per character with memory off, on, and on + retrieved memory; also on distant
    recalls and connective clauses (txl.lm_metrics), and each setting against the one before it."""
    import torch  # start-up: torch

    for p in paths:
        existing_path(p)
    cfg = resolve_config(config, set_)
    ckpt = checkpoint or (Path(cfg.model.checkpoint) if cfg.model.checkpoint else SHIPPED_CHECKPOINT)
    existing_path(ckpt, "checkpoint")
    torch.set_num_threads(threads)
    model_cfg = cfg.model.model_copy(
        update={k: v for k, v in (("mem_len", mem_len), ("clamp_len", clamp_len)) if v is not None}
    )
    out = _evaluate(ckpt, paths, settings, cfg, model_cfg, store, seg_len, lanes, max_docs)
    if as_json:
        print(json.dumps(out))
        return
    _print_lm_tables(out)


def _evaluate(
    ckpt: Path, paths: list[Path], settings: str, cfg, model_cfg, store: bool, seg_len, lanes, max_docs
) -> dict:
    """evaluate_checkpoint over the chosen settings; retrieved memory from a SegmentStore per document
    (in a temporary folder) when `store`, else from txl's in-memory stand-in."""
    from flows.lm_store import StorePastWindows  # start-up: torch
    from txl.eval_checkpoint import evaluate_checkpoint  # start-up: torch
    from txl.windows import PastWindows  # start-up: torch

    chosen = [s.strip() for s in settings.split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="ldx-eval-") as tmp:

        def store_windows() -> StorePastWindows:
            return StorePastWindows(Path(tmp) / uuid.uuid4().hex, cfg.retrieval)

        windows = store_windows if store else PastWindows
        try:
            return evaluate_checkpoint(
                ckpt,
                paths,
                chosen,
                cfg.parse,
                cfg.segment,
                model_cfg,
                cfg.retrieval.inject_k,
                windows,
                seg_len,
                lanes,
                max_docs,
            )
        except ValueError as e:
            fail(str(e))


def _print_lm_tables(out: dict) -> None:
    """The per-setting figures, then each pair's per-token NLL differences with their 95% intervals."""
    from txl.lm_metrics import SUBSETS, format_difference, format_figures  # start-up: torch

    for message in out["warnings"] + [f"skipped: {m}" for _, m in out["errors"]]:
        console.print(message, highlight=False, markup=False)
    threshold = out["distant_threshold"]
    table = Table(
        title=f"{out['documents']} documents, {Path(out['checkpoint']).name}",
        caption=f"distant recall: trigrams last seen over {threshold} tokens back",
    )
    for col in (
        "setting",
        "corpus",
        "tokens",
        "chars",
        "NLL",
        "perplexity",
        "bpc",
        "ppl distant recall",
        "ppl after connective",
    ):
        table.add_column(col)
    for setting, rows in out["settings"].items():
        for corpus, r in rows.items():
            table.add_row(
                setting,
                corpus,
                str(r["tokens"]),
                str(r["chars"]),
                f"{r['nll']:.3f}",
                f"{r['ppl']:.2f}",
                f"{r['bpc']:.3f}",
                format_figures(r["distant_recall"]),
                format_figures(r["after_connective"]),
            )
    console.print(table)
    if not out["paired"]:
        return
    diffs = Table(title="paired per-token NLL differences, document-bootstrap 95% intervals")
    for col in ("pair", "corpus", *SUBSETS):
        diffs.add_column(col)
    for pair, groups in out["paired"].items():
        for corpus, d in groups.items():
            diffs.add_row(pair, corpus, *(format_difference(d[s]) for s in SUBSETS))
    console.print(diffs)
