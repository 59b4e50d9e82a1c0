"""The `ldx` program: what happens before its command line is read (`ldx run` restarts under jemalloc)."""

from __future__ import annotations

import sys

from pipeline.process import restart_under_jemalloc


def main() -> None:
    if sys.argv[1:2] == ["run"]:
        restart_under_jemalloc()  # before the imports below, which the restart would repeat
    from flows.cli import app  # start-up: after the restart, not before it

    app(prog_name="ldx")
