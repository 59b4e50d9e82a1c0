"""flows: Prefect orchestration (run, train, ask, serve), the Parquet outputs and the `ldx` CLI."""

from pipeline.environment import set_environment_defaults

# Before Prefect is imported anywhere: it reads its settings once, at import.
set_environment_defaults()
