"""flows: Prefect orchestration (run, train, ask, serve), the Parquet outputs and the `ldx` CLI."""

import os

# Defaults that make the embedded set-up work on a small machine; an explicit setting wins.
# Prefect's temporary server needs more than its default 20 s to start on 2 cores, models are never
# fetched from a hub at run time, and the tokenizer's own threads would fight the task runner's.
for _key, _value in {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "HF_HUB_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ.setdefault(_key, _value)
