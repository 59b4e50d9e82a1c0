"""What every `ldx` command module shares: the sub-apps, the config options, the one-line failure."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from flows.config import ConfigError, LdxConfig, load_config

console = Console()
err_console = Console(stderr=True)

eval_app = typer.Typer(help="Evaluate on any file in the documented layouts; --json for one JSON object.")
config_app = typer.Typer(help="Inspect the effective configuration.")

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="TOML file with [parse] [segment] [model] [retrieval] [run].")
]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", "-s", help="Override one key: section.key=value (repeatable).")
]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line on stderr and exit non-zero."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
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
    from pipeline.errors import DocumentError

    try:
        yield
    except DocumentError as e:
        fail(str(e))
