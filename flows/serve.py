"""Scheduled runs: the run flow served as a Prefect deployment with a cron schedule (`ldx serve`)."""

from __future__ import annotations

from typing import Any

from prefect import flow

from flows.config import LdxConfig
from flows.run import run_flow, task_runner_for


@flow(name="ldx-scheduled-run", persist_result=False)
def scheduled_run(input_dir: str, out_dir: str, config: dict[str, Any] | None = None) -> dict:
    """One scheduled run. A served flow is re-imported in a fresh process for every run, so the task
    runner the config asks for (threads or Dask) is applied here rather than at serve time."""
    cfg = LdxConfig.model_validate(config or {})
    return run_flow.with_options(task_runner=task_runner_for(cfg))(
        input_dir, out_dir, cfg.model_dump(mode="json")
    )


def serve(input_dir: str, out_dir: str, config: LdxConfig, cron: str, name: str = "ldx-run") -> None:
    """Create (or update) the deployment `ldx-scheduled-run/<name>` and run it on `cron` until stopped."""
    scheduled_run.serve(
        name=name,
        cron=cron,
        parameters={"input_dir": input_dir, "out_dir": out_dir, "config": config.model_dump(mode="json")},
        pause_on_shutdown=False,
        limit=1,  # runs on one OUT_DIR exclude each other anyway (its lock); a late run waits its turn
    )
