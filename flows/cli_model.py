"""`ldx` commands of the model work (registered on the root app and eval_app)."""

from __future__ import annotations

from flows.cli import app  # noqa: F401
