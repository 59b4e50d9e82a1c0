"""flows: Prefect orchestration (run, train, ask, serve), the Parquet outputs and the `ldx` CLI."""
