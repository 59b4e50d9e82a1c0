"""Environment defaults every entry point shares (the `ldx` CLI, the flows as a library, the tests)."""

from __future__ import annotations

import os

from pipeline.process import limit_arenas

# Prefect's temporary server needs more than its default 20 s to start on 2 cores, nothing is reported
# home, models are never fetched from a hub at run time, and the tokenizer's own threads would fight the
# task runner's. The Makefile exports the same values for shells.
DEFAULTS = {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "HF_HUB_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    # glibc gives each thread that allocates its own heap (up to 8 per core), each kept as large as its
    # busiest moment; two shared ones cost no measured encoding speed (pipeline.process for the rest)
    "MALLOC_ARENA_MAX": "2",
}


def set_environment_defaults() -> None:
    """Set each default that the environment does not set already (an explicit setting wins)."""
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    if os.environ["MALLOC_ARENA_MAX"].isdigit():  # glibc ignores another value; so does this
        limit_arenas(int(os.environ["MALLOC_ARENA_MAX"]))  # this process read its environment already
