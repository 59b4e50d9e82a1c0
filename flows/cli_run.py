"""`ldx run`, `ldx serve`, `ldx server`, `ldx review`: the flow's commands."""

from __future__ import annotations

from flows.cli import app  # noqa: F401
