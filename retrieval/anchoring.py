"""Semantic anchoring: reset the recurrence memory where a long encoding pass has drifted away from its
document. Drift is measured with the sentence model as the cosine between each segment and the
document's opening segment; under `threshold` the memory is emptied before that segment is encoded.
Off by default (`retrieval.anchoring`); benchmarks/anchoring.py measures what it does to the LM loss.
"""

from __future__ import annotations

import numpy as np

from retrieval.sentence import embed


def drift_resets(texts: list[str], threshold: float) -> list[bool]:
    """Per segment: reset memory before it? Never for the opening segment itself."""
    if len(texts) < 2:
        return [False] * len(texts)
    vecs = embed(texts)
    sims = vecs @ vecs[0]
    return [False] + [bool(s < threshold) for s in np.asarray(sims)[1:]]
