"""The reset rule of semantic anchoring (retrieval.anchoring) on its own, over unit keys."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.anchoring import reset_due, resets


def _unit(rows) -> list[np.ndarray]:
    x = np.asarray(rows, dtype=np.float32)
    return list(x / np.linalg.norm(x, axis=1, keepdims=True))


def test_a_segment_resets_after_one_that_drifted_from_the_opening():
    e0, e1 = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    keys = _unit([e0, e1, e0, [1.0, 1.0, 0.0], e1])  # cosines with the opening: 1, 0, 1, 0.71, 0
    assert resets(keys, 0.5) == [False, False, True, False, False]
    assert resets(keys, 0.8) == [False, False, True, False, True]


def test_the_two_opening_segments_never_reset():
    keys = _unit([[1.0, 0.0], [-1.0, 0.0]])
    assert not reset_due(keys[0], keys[0], 0, 2.0)
    assert not reset_due(keys[0], keys[0], 1, 2.0)  # the opening's own key says nothing
    assert reset_due(keys[0], keys[1], 2, 0.0)


def test_thresholds_outside_the_cosine_range_never_or_always_reset():
    rng = np.random.default_rng(0)
    keys = _unit(rng.normal(size=(9, 16)))
    keys[4] = keys[0] * 1.0000001  # rounding may push a cosine just past 1
    keys[6] = -keys[0] * 1.0000001
    assert resets(keys, -1.0001) == [False] * 9
    assert resets(keys, 1.0001) == [False, False] + [True] * 7


_keys = st.lists(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=4).filter(
        lambda v: np.linalg.norm(v) > 1e-3
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=100, deadline=None)
@given(_keys, st.floats(-1.5, 1.5), st.floats(-1.5, 1.5))
def test_a_higher_threshold_resets_at_least_where_a_lower_one_does(rows, a, b):
    low, high = min(a, b), max(a, b)
    keys = _unit(rows)
    at_low, at_high = resets(keys, low), resets(keys, high)
    assert len(at_low) == len(keys)
    assert not any(at_high[:2])
    assert all(h for lo, h in zip(at_low, at_high, strict=True) if lo)
