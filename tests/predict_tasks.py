"""A PredictConfig with only the named tasks switched on, so a test of one task does not run the others
(and a task added later stays off in it without the test being edited)."""

from __future__ import annotations

from retrieval.predict.config import PredictConfig

TASKS = (
    "roles",
    "articles",
    "consistency",
    "provisos",
    "duplicates",
    "claim_tree",
    "claim_support",
    "clauses",
    "connective_attention",
)


def only(*tasks: str, **options) -> PredictConfig:
    unknown = set(tasks) - set(TASKS)
    if unknown:
        raise ValueError(f"not a predict task: {sorted(unknown)}")
    return PredictConfig(**{t: t in tasks for t in TASKS}, **options)
