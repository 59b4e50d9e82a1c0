"""`ldx parse` and `ldx tokenizer …`: the pipeline's commands."""

from __future__ import annotations

from flows.cli import app  # noqa: F401  (commands are added by the parsing and tokenizer work)
