"""`ldx` commands of the predict work: `eval roles`, `eval articles`, `eval consistency`, `train heads`,
`train articles`.

What the commands run is imported inside them, on lines marked `# start-up`, for what it adds to every
`ldx` command's start-up (0.4 s alone; timed after `import flows.cli`): retrieval.predict and
retrieval.encoder import torch (~1.4 s), pipeline.parsing its parsers (~0.16 s), pipeline.analysis ~0.12 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows.cli import app  # noqa: F401  (the root app exists first)
from flows.cli_common import CuadOpt, console, eval_app, existing_path, fail, fail_on_bad_input, train_app
from pipeline.config import ParseConfig
from pipeline.paths import CLAUSE_HEAD, HEADS_DIR, MODELS_DIR, SHARED_DATA

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
TowersOpt = Annotated[
    str,
    typer.Option(
        help="What the role head's towers read: text, txl (the Transformer-XL's "
        "states of the segment and of its memory) or both."
    ),
]
EncoderOpt = Annotated[
    Path | None,
    typer.Option(help="Checkpoint in data/models/ the txl towers read; default: the shipped one."),
]
VIEWS = ("judgment", "facts")  # what an article head reads (retrieval.predict.heads.ARTICLE_FILES)
HeadsOpt = Annotated[
    Path | None, typer.Option("--heads", help="Folder of head weights; default: data/models/heads/.")
]


def _table(title: str, rows: dict[str, dict[str, float]]) -> Table:
    cols = sorted({k for r in rows.values() for k in r})
    t = Table(title=title)
    t.add_column("")
    for c in cols:
        t.add_column(c, justify="right")
    for name, r in rows.items():
        t.add_row(name, *[f"{r[c]:.4f}" if isinstance(r.get(c), float) else str(r.get(c, "")) for c in cols])
    return t


def _documents(path: Path, text_field: str, limit: int | None, skip=lambda doc: False) -> tuple[list, list]:
    """Parsed documents of a corpus (bad records are collected, not fatal), at most `limit` kept."""
    from pipeline.parsing import iter_documents  # start-up: parsers

    docs, errors = [], []
    for doc in iter_documents(path, ParseConfig(jsonl_text_field=text_field), errors):
        if doc.blocks and not skip(doc):
            docs.append(doc)
        if limit is not None and len(docs) >= limit:
            break
    return docs, errors


def _is_india_layout(path: Path) -> bool:
    from retrieval.predict.train import read_jsonl  # start-up: torch

    first = next(iter(read_jsonl(path)), None)
    return isinstance(first, dict) and "sentences" in first


@eval_app.command("roles")
def eval_roles_cmd(
    file: Annotated[
        Path,
        typer.Argument(
            help="india_sc_roles layout (sentences with labels), or a JSONL corpus "
            "of Chinese judgments (evaluated against the parser's types with "
            "the structural markers removed)."
        ),
    ],
    text_field: Annotated[
        str, typer.Option(help="Text field of a judgment corpus (e.g. fd, text).")
    ] = "text",
    limit: Annotated[int | None, typer.Option(help="At most this many documents.")] = None,
    heads: HeadsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Sentence- (or block-) level accuracy and macro-F1 of the block-role head on documents it was not
    trained on."""
    import torch  # start-up: torch

    from retrieval.predict.heads import RoleHead  # start-up: torch
    from retrieval.predict.role_states import head_encoder, states_of  # start-up: torch
    from retrieval.predict.train import eval_roles, load_india, zh_units  # start-up: torch

    existing_path(file)
    weights = (heads or HEADS_DIR) / "roles.npz"
    if not weights.exists():
        fail(f"{weights}: no role head; train one with `ldx train heads`")
    head = RoleHead.load(weights)
    encode = None
    if head.reads_txl:
        # a small model on a shared machine: a second intra-op thread made encoding 16x slower, not faster
        torch.set_num_threads(1)
        encoder = head_encoder(head)
        if encoder is None:
            fail(
                f"{weights}: its towers read {head.encoder.get('file', '?')} (sha256 "
                f"{head.encoder.get('sha256', '?')[:12]}), which is not in data/models/ unchanged"
            )
        encode = states_of(encoder, head.decay)
    trained = set(head.trained_on)
    with fail_on_bad_input():
        if _is_india_layout(file):
            docs = [d for d in load_india(file) if d.doc_id not in trained][:limit]
            settings = {"held_apart": docs}
        else:
            parsed, _ = _documents(file, text_field, limit, lambda doc: doc.doc_id in trained)
            settings = {
                "markers_removed": [zh_units(d, strip_markers=True) for d in parsed],
                "as_written": [zh_units(d) for d in parsed],
            }
    if not any(settings.values()):
        fail(f"{file}: every document in it was used to train the head; nothing is held apart")
    results = {n: {**eval_roles(head, d, encode), "documents": len(d)} for n, d in settings.items()}
    report = {"file": str(file), "heads": str(weights), "towers": head.towers, "results": results}
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        console.print(_table(f"block roles: {file.name} (towers: {head.towers})", results))


@eval_app.command("articles")
def eval_articles_cmd(
    file: Annotated[
        Path, typer.Argument(help="judge_criminal layout: JSON lines with text (facts) and la (articles).")
    ],
    folds: Annotated[int, typer.Option(help="Cross-validation folds.")] = 5,
    limit: Annotated[int | None, typer.Option(help="At most this many cases.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the folds.")] = 0,
    view: Annotated[
        str, typer.Option(help="What the cross-validated arms read: judgment or facts.")
    ] = "judgment",
    heads: HeadsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Micro/macro-F1 of article prediction with and without retrieved memory, against the TF-IDF + linear
    baseline, on the same cross-validation folds in one run; beside them the shipped heads
    (articles_judgment.npz for a case with the court's part, articles.npz for facts alone) on the file's
    cases they never trained on (`shipped`; `shipped_facts`: articles.npz alone on the facts)."""
    from retrieval.predict.heads import ArticleHeads  # start-up: torch
    from retrieval.predict.train import eval_articles  # start-up: torch

    existing_path(file)
    if folds < 2:
        fail("--folds must be at least 2")
    if view not in VIEWS:
        fail(f"--view must be one of {', '.join(VIEWS)}, not {view!r}")
    with fail_on_bad_input():
        shipped = ArticleHeads.load(heads or HEADS_DIR)
        found = shipped if shipped.files else None
        report = eval_articles(file, folds=folds, seed=seed, limit=limit, shipped=found, view=view)
    report["heads"] = {v: str(p) for v, p in shipped.files.items()} or None
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        console.print(
            _table(f"articles: {file.name} ({report['cases']} cases, {folds} folds)", report["results"])
        )


@eval_app.command("consistency")
def eval_consistency_cmd(
    file: Annotated[
        Path, typer.Argument(help="A JSONL corpus of judgments (or any file `ldx parse` reads).")
    ],
    text_field: Annotated[str, typer.Option(help="Text field of a JSONL corpus (e.g. fd, text).")] = "text",
    limit: Annotated[int | None, typer.Option(help="At most this many documents.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the perturbations.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """False-positive rate of the verdict–facts checks on the real judgments, and their detection rate on
    copies with a name, an amount or a charge swapped in from another case."""
    from pipeline.analysis.perturb import measure  # start-up: pipeline.analysis

    existing_path(file)
    with fail_on_bad_input():
        docs, errors = _documents(file, text_field, limit)
    report = {"file": str(file), "unreadable_records": len(errors), **measure(docs, seed)}
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    console.print(
        f"{report['documents']} judgments with a verdict; false-positive rate "
        f"{report['false_positive_rate']:.3f}"
    )
    console.print(_table("detection on perturbed copies", report["detection"]))


CriminalOpt = Annotated[
    list[Path],
    typer.Option(
        help="Criminal cases for the article head (repeatable): the judge_criminal layout, or a JSONL "
        "corpus of judgments (its criminal judgments, articles from their citations); each file's "
        "held-apart quarter is not trained on."
    ),
]
StatutesOpt = Annotated[
    Path | None,
    typer.Option(
        help="criminal_law_articles.jsonl: the article texts the charge channel looks charges up in."
    ),
]


def _role_encoder(towers: str, encoder: Path | None) -> tuple:
    """(encode, identity) of the checkpoint the role head's txl towers read; (None, None) for text."""
    from retrieval.encoder import checkpoint_file  # start-up: torch
    from retrieval.predict.heads import RoleHead  # start-up: torch
    from retrieval.predict.role_states import encoder_identity, role_encoder, states_of  # start-up: torch

    if towers == "text":
        return None, None
    path = checkpoint_file(str(encoder) if encoder else None)
    if path is None or not path.is_file() or path.resolve().parent != MODELS_DIR.resolve():
        fail(f"{path}: the txl towers need a checkpoint in {MODELS_DIR} (the run loads it from there)")
    return states_of(role_encoder(path), RoleHead.decay), encoder_identity(path)


@train_app.command("heads")
def train_heads_cmd(
    india: Annotated[
        Path, typer.Option(help="india_sc_roles layout; its held-apart quarter is not trained on.")
    ],
    criminal: CriminalOpt,
    zh: Annotated[
        list[str] | None,
        typer.Option(help="Chinese judgment corpus for the role head, PATH or PATH=TEXT_FIELD (repeatable)."),
    ] = None,
    zh_docs: Annotated[int, typer.Option(help="At most this many Chinese judgments per corpus.")] = 400,
    out: Annotated[Path | None, typer.Option(help="Output folder; default: data/models/heads/.")] = None,
    towers: TowersOpt = "both",
    encoder: EncoderOpt = None,
    statutes: StatutesOpt = None,
    seed: int = 0,
) -> None:
    """Train the role head (dual tower) and the article heads; writes roles.npz, articles.npz and
    articles_judgment.npz."""
    import torch  # start-up: torch

    from retrieval.predict.heads import TOWERS  # start-up: torch
    from retrieval.predict.train import (  # start-up: torch
        is_held_apart,
        load_india,
        train_role_head,
        zh_units,
    )

    torch.set_num_threads(1)
    if towers not in TOWERS:
        fail(f"--towers must be one of {', '.join(TOWERS)}, not {towers!r}")
    encode, identity = _role_encoder(towers, encoder)
    corpora = [(Path(p), f) for p, _, f in (z.partition("=") for z in zh or [])]
    for p in [india, *criminal, *(c for c, _ in corpora), *([statutes] if statutes else [])]:
        existing_path(p)
    out = out or HEADS_DIR
    india_docs = [d for d in load_india(india) if not is_held_apart(d.doc_id)]
    zh_docs_all = []
    for corpus, field in corpora:
        docs, _ = _documents(corpus, field or "text", zh_docs, lambda doc: is_held_apart(doc.doc_id))
        zh_docs_all += [zh_units(d) for d in docs]
    train_role_head(
        india_docs, zh_docs_all, out / "roles.npz", seed=seed, towers=towers, encode=encode, encoder=identity
    )
    written = _train_articles(criminal, out, statutes, seed)
    console.print(
        f"wrote {out / 'roles.npz'} ({len(india_docs)} Indian, {len(zh_docs_all)} Chinese judgments) "
        f"and {written}"
    )


def _train_articles(criminal: list[Path], out: Path, statutes: Path | None, seed: int) -> str:
    """Both article heads, one per view, into `out`; says what was written."""
    from retrieval.predict.heads import ARTICLE_FILES  # start-up: torch
    from retrieval.predict.train import train_article_head  # start-up: torch

    with fail_on_bad_input():
        for view, name in ARTICLE_FILES.items():
            train_article_head(criminal, out / name, seed=seed, statutes=statutes, view=view)
    return " and ".join(str(out / name) for name in ARTICLE_FILES.values())


@train_app.command("articles")
def train_articles_cmd(
    criminal: CriminalOpt,
    out: Annotated[Path | None, typer.Option(help="Output folder; default: data/models/heads/.")] = None,
    statutes: StatutesOpt = None,
    seed: int = 0,
) -> None:
    """Train the article heads alone: articles.npz reads a case's facts, articles_judgment.npz its facts
    and the court's reasoning and sentence with every citation cut."""
    for p in [*criminal, *([statutes] if statutes else [])]:
        existing_path(p)
    console.print(f"wrote {_train_articles(criminal, out or HEADS_DIR, statutes, seed)}")


@train_app.command("clauses")
def train_clauses_cmd(
    data: CuadOpt = SHARED_DATA / "en" / "contracts",
    out: Annotated[
        Path | None, typer.Option(help="Output file; default: data/models/heads/clauses.npz.")
    ] = None,
) -> None:
    """Train the contract clause head on CUAD's training contracts (C chosen on a tenth of them)."""
    from retrieval.predict.train_clauses import train_clause_head  # start-up: scikit-learn, torch

    existing_path(data, "directory")
    out = out or CLAUSE_HEAD
    with fail_on_bad_input():
        head, report = train_clause_head(data)
    head.save(out)
    console.print_json(data={**report, "out": str(out)})
