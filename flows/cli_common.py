"""What every `ldx` command module shares: the sub-apps, the config options, the one-line failure."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from flows.config import ConfigError, LdxConfig, load_config
from pipeline.errors import DocumentError

console = Console()
err_console = Console(stderr=True)

eval_app = typer.Typer(help="Evaluate on any file in the documented layouts; --json for one JSON object.")
config_app = typer.Typer(help="Inspect the effective configuration.")
train_app = typer.Typer(help="Train the Transformer-XL language model on document-ordered streams.")

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help=r"TOML file with \[parse] \[segment] \[model] \[retrieval] \[run] tables."
    ),
]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", "-s", help="Override one key: section.key=value (repeatable).")
]
CuadOpt = Annotated[Path, typer.Option(help="Folder with cuad_contracts.jsonl.gz and cuad_qa.jsonl.gz.")]


# C0/C1 controls (ESC starts a terminal command) and the bidi overrides that reorder what is shown;
# newline and tab stay.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe(value) -> str:
    """Document text or a path as it may reach the terminal: control characters shown escaped."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
        str(value),
    )


def plain(value, style: str = "") -> Text:
    """`value` as literal text for rich: never read as markup, control characters escaped."""
    return Text(safe(value), style=style)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line on stderr and exit non-zero."""
    err_console.print(
        Text.assemble(("error:", "bold red"), " ", safe(message)), highlight=False, soft_wrap=True
    )
    raise typer.Exit(code)


def resolve_config(config: Path | None, overrides: list[str] | None) -> LdxConfig:
    try:
        return load_config(config, overrides)
    except ConfigError as e:
        fail(str(e))


def existing_path(path: Path, what: str = "file") -> Path:
    if not path.exists():
        fail(f"{path}: no such {what}")
    return path


@contextmanager
def fail_on_bad_input() -> Iterator[None]:
    """A document the pipeline cannot read (pipeline.errors.DocumentError, which names the file and the
    reason) ends the command with that one line."""
    try:
        yield
    except DocumentError as e:
        fail(str(e))
