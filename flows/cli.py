"""`ldx`: the command line of LongDoc-XL. Each command group lives in its own module and registers here."""

from __future__ import annotations

import typer

from flows.cli_common import ConfigOpt, SetOpt, config_app, console, eval_app, resolve_config, train_app
from flows.config import config_toml

app = typer.Typer(
    name="ldx",
    help="LongDoc-XL: parse, segment, encode, index and question long legal and technical documents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(config_app, name="config")
app.add_typer(eval_app, name="eval")
app.add_typer(train_app, name="train")


@config_app.command("show")
def config_show(config: ConfigOpt = None, set_: SetOpt = None) -> None:
    """Print the effective configuration (defaults, then --config file, then --set overrides) as TOML."""
    console.print(config_toml(resolve_config(config, set_)), highlight=False, markup=False)


if __name__ == "__main__":
    # `python -m flows.cli` runs this file as __main__, beside the `flows.cli` that the command modules
    # import and register on: run that one, through the entry point that `ldx` has.
    from flows.entry import main

    main()
else:
    # Command modules register their commands on `app` and the sub-apps when imported.
    from flows import (  # noqa: F401
        cli_model,
        cli_pipeline,
        cli_predict,
        cli_reader,
        cli_retrieval,
        cli_run,
        cli_tokenizer,
    )
