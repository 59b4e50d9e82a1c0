"""`ldx run`, `ldx serve`, `ldx server`, `ldx review`: the flow's commands.

The flow's modules are imported inside the commands, on lines marked `# start-up`, for what they add to
every `ldx` command's start-up (0.4 s alone; timed after `import flows.cli`): flows.run, flows.serve,
flows.manifest and flows.report import Prefect and the model stages (~3 s), Prefect's schedules ~0.9 s,
pipeline.store pyarrow (~0.15 s). `ldx run` imports the flow itself only once its temporary Prefect
server is starting (flows.api_server).
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import sys
import webbrowser
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from flows.api_server import ServerDidNotStart, temporary_api
from flows.cli import app
from flows.cli_common import ConfigOpt, SetOpt, console, existing_path, fail, plain, resolve_config
from flows.config import LdxConfig
from pipeline.process import mmap_large_blocks

OutOpt = Annotated[
    Path,
    typer.Option(
        "--out", "-o", help="Output directory (Parquet tables, index/, manifest.json, report.html)."
    ),
]
InputArg = Annotated[Path, typer.Argument(help="Directory scanned recursively for documents.")]
DaskOpt = Annotated[
    bool, typer.Option("--dask", help="Run tasks on Dask (a local cluster, or --dask-address).")
]
DaskAddressOpt = Annotated[
    str | None, typer.Option("--dask-address", help="A running Dask scheduler, e.g. tcp://host:8786.")
]


def _prepared(
    input_dir: Path,
    out: Path,
    config: Path | None,
    set_: list[str] | None,
    dask: bool,
    dask_address: str | None,
) -> LdxConfig:
    from pipeline.store import OutputStore, StoreLocked  # start-up: pyarrow

    cfg = resolve_config(config, set_)
    if dask or dask_address:
        cfg.run.task_runner = "dask"
    if dask_address:
        cfg.run.dask_address = dask_address
    if not existing_path(input_dir, "directory").is_dir():
        fail(f"{input_dir}: not a directory")
    try:  # refuse at once, before the Prefect API starts, when another run holds OUT_DIR
        with OutputStore(out, "probe").lock():
            pass
    except StoreLocked as e:
        fail(str(e))
    return cfg


@app.command("run")
def run(
    input_dir: InputArg,
    out: OutOpt,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    dask: DaskOpt = False,
    dask_address: DaskAddressOpt = None,
) -> None:
    """Run parse → segment → encode → index → predict → write over INPUT_DIR as a Prefect flow.

    Unchanged files are restored from the cache; a run that was killed resumes under its run id.
    Without PREFECT_API_URL the flow runs against a temporary local Prefect server (SQLite).
    """
    cfg = _prepared(input_dir, out, config, set_, dask, dask_address)
    from flows.manifest import ManifestError  # start-up: Prefect
    from pipeline.store import StoreLocked  # start-up: pyarrow

    # At exit the interpreter's last collections walk every object the run left (over a second, measured)
    # only to free memory that the process hands back anyway; frozen objects are skipped.
    atexit.register(gc.freeze)
    mmap_large_blocks()  # this process's heap grows batch by batch otherwise (pipeline.process)
    try:
        with temporary_api(lambda: _load_ahead(cfg)):
            from flows.run import run_flow, task_runner_for  # start-up: Prefect, once its server starts

            manifest = run_flow.with_options(task_runner=task_runner_for(cfg))(
                str(input_dir), str(out), cfg.model_dump(mode="json")
            )
    except (StoreLocked, ManifestError) as e:
        fail(str(e))
    except ServerDidNotStart as e:
        fail(f"{e}; point PREFECT_API_URL at a running server instead (see `ldx server`)")
    _print_summary(manifest)
    if cfg.run.open_report:
        _open(out / "report.html")


def _load_ahead(cfg: LdxConfig) -> None:
    """What the run will import anyway (Prefect, the model stages, the report's libraries), done while
    the temporary Prefect server starts in its own process."""
    import flows.run  # noqa: F401  # start-up: Prefect, the flow's tasks, the report's DuckDB and matplotlib
    from flows.tasks import load_stages  # start-up: Prefect

    load_stages(cfg)


def _print_summary(manifest: dict) -> None:
    table = Table(title=f"run {manifest['run_id']} · {manifest['status']}", show_header=False)
    for key, value in manifest["counts"].items():
        if isinstance(value, dict):  # a run stage's own counts, e.g. index
            for sub, n in value.items():
                table.add_row(f"{key}.{sub}", str(n))
        else:
            table.add_row(key, str(value))
    for stage, seconds in manifest["seconds"].items():
        table.add_row(f"{stage} (s)", f"{seconds:.2f}")
    console.print(table)
    console.print(
        plain(f"outputs in {manifest['out_dir']} · report: {Path(manifest['out_dir']) / 'report.html'}")
    )


def _open(path: Path) -> None:
    if not webbrowser.open(path.resolve().as_uri()):
        console.print(plain(f"open {path} in a browser"))


@app.command("serve")
def serve(
    input_dir: InputArg,
    out: OutOpt,
    cron: Annotated[
        str, typer.Option("--cron", help='When to run, as cron, e.g. "0 2 * * *" (02:00 daily).')
    ],
    name: Annotated[str, typer.Option("--name", help="Deployment name.")] = "ldx-run",
    config: ConfigOpt = None,
    set_: SetOpt = None,
    dask: DaskOpt = False,
    dask_address: DaskAddressOpt = None,
) -> None:
    """Serve the run flow as a Prefect deployment on a cron schedule (runs until interrupted).

    Point PREFECT_API_URL at a Prefect server (see `ldx server`) to see the schedule and runs in the UI.
    """
    from prefect.client.schemas.schedules import CronSchedule  # start-up: Prefect

    try:
        CronSchedule(cron=cron)
    except ValidationError:
        fail(f'--cron {cron!r}: not a cron expression (e.g. "0 2 * * *")')
    cfg = _prepared(input_dir, out, config, set_, dask, dask_address)
    from flows.serve import serve as serve_flow  # start-up: Prefect

    serve_flow(str(input_dir.resolve()), str(out.resolve()), cfg, cron, name)


@app.command("server")
def server(
    start: Annotated[
        bool, typer.Option("--start", help="Start `prefect server start` now, in the foreground.")
    ] = False,
    host: Annotated[str, typer.Option(help="Address the server listens on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of the API and UI.")] = 4200,
) -> None:
    """How to run a Prefect server with its UI and point `ldx run` / `ldx serve` at it."""
    url = f"http://{host}:{port}"
    console.print(
        "Runs use a temporary local Prefect server by default (SQLite, gone when the run ends).\n"
        "To keep flow runs, schedules and artifacts and browse them in the UI:\n"
        f"  1. start a server:     prefect server start --host {host} --port {port}\n"
        f"  2. point runs at it:   export PREFECT_API_URL={url}/api\n"
        "  3. run as usual:       ldx run INPUT_DIR --out OUT_DIR   (or ldx serve … --cron …)\n"
        f"  4. open the UI:        {url}  (Runs → ldx-run; Artifacts → ldx-run-summary)",
        highlight=False,
        soft_wrap=True,
    )
    if start:
        prefect = shutil.which("prefect") or str(Path(sys.executable).with_name("prefect"))
        os.execv(prefect, [prefect, "server", "start", "--host", host, "--port", str(port)])


@app.command("review")
def review(
    out_dir: Annotated[Path, typer.Argument(help="The OUT_DIR of an `ldx run`.")],
    open_: Annotated[bool, typer.Option("--open/--no-open", help="Open the report in a browser.")] = True,
) -> None:
    """Write OUT_DIR/report.html (run overview, flag queue, figures with their DuckDB queries, documents) and
    one page per document under OUT_DIR/review/ (blocks, predictions with their evidence, page images)."""
    from flows.manifest import ManifestError  # start-up: Prefect
    from flows.report import write_report  # start-up: Prefect

    existing_path(out_dir, "directory")
    try:
        path = write_report(out_dir)
    except (FileNotFoundError, ManifestError) as e:
        fail(str(e))
    console.print(plain(f"wrote {path}"))
    if open_:
        _open(path)
