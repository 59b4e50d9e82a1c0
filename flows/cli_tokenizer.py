"""`ldx tokenizer …`: train the domain tokenizer and look at how it cuts text.

pipeline.tokenizer (the `tokenizers` library) adds ~0.16 s to every `ldx` command's start-up (0.4 s alone,
timed after `import flows.cli`): the commands import it themselves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows.cli import app
from flows.cli_common import console, fail

tokenizer_app = typer.Typer(
    help="Train and inspect the domain tokenizer (zh + en legal BPE).", no_args_is_help=True
)
app.add_typer(tokenizer_app, name="tokenizer")


@tokenizer_app.command("train")
def train_cmd(
    corpora: Annotated[
        list[str],
        typer.Argument(
            help="Corpus files: PATH.jsonl[.gz][:field,field.sub,...] (default field: text), .txt, or any "
            "document the parser reads (PDF, XML, .doc)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for tokenizer.json and training.json.")],
    vocab_size: Annotated[
        int, typer.Option(help="Total vocabulary, special and byte tokens included.")
    ] = 16384,
    seed: Annotated[int, typer.Option(help="Seeds the held-out split and the training sample.")] = 0,
    holdout: Annotated[float, typer.Option(help="Fraction of each corpus's records held apart.")] = 0.05,
    max_chars: Annotated[
        int, typer.Option(help="Training characters taken from each corpus at most.")
    ] = 2_000_000,
    min_frequency: Annotated[int, typer.Option(help="Least count of a pair worth a merge.")] = 3,
) -> None:
    """Train the tokenizer; report tokens per character on the held-apart records of each corpus."""
    from pipeline.tokenizer import CorpusSpec, TrainOptions, train_from_corpora  # start-up: tokenizers

    if not 0 <= holdout < 1:
        fail(f"--holdout must be in [0, 1), got {holdout}")
    specs = [CorpusSpec.parse(c) for c in corpora]
    options = TrainOptions(vocab_size=vocab_size, min_frequency=min_frequency)
    with console.status(f"training on {len(specs)} corpora"):
        try:
            record = train_from_corpora(specs, out, options, seed, holdout, max_chars)
        except ValueError as e:
            fail(str(e))
    table = Table(title="held-out tokens per character (baselines: 1 per char, 1 per UTF-8 byte)")
    for col in ("corpus", "lang", "docs", "chars", "tok/char", "B/char", "tok/B"):
        table.add_column(col, justify="left" if col in ("corpus", "lang") else "right")
    for name, r in record["held_out"].items():
        table.add_row(
            Path(name).name,
            r["language"],
            str(r["records"]),
            f"{r['chars']:,}",
            f"{r['tokens_per_char']:.3f}",
            f"{r['bytes_per_char']:.2f}",
            f"{r['ratio_to_byte_baseline']:.3f}",
        )
    console.print(table)
    console.print(
        f"wrote {out / 'tokenizer.json'} ({record['vocab_size']} tokens, "
        f"sha256 {record['tokenizer_sha256'][:12]})"
    )


@tokenizer_app.command("show")
def show_cmd(
    text: Annotated[str, typer.Argument(help="Text to tokenize.")],
    tokenizer_path: Annotated[
        Path | None,
        typer.Option("--tokenizer", help="tokenizer.json or its folder; default: the shipped one."),
    ] = None,
) -> None:
    """Print the tokens of TEXT, one per bracket, and their count."""
    from pipeline.tokenizer import load_tokenizer  # start-up: tokenizers

    try:
        tokenizer = load_tokenizer(tokenizer_path)
    except (FileNotFoundError, ValueError) as e:
        fail(str(e))
    enc = tokenizer.hf.encode(text, add_special_tokens=False)
    console.print(" ".join(f"[{text[a:b]}]" for a, b in enc.offsets), markup=False, highlight=False)
    console.print(f"{len(enc.ids)} tokens for {len(text)} characters")
