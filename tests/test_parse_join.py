"""Joining the lines of one paragraph: CJK without spaces, hyphenation, numbers broken at a separator."""

from __future__ import annotations

import pytest

from pipeline.parsing.layout import join_lines


@pytest.mark.parametrize(
    "a, b, joined",
    [
        ("共计价值人民币12,", "860元", "共计价值人民币12,860元"),
        ("合计3.", "5万元", "合计3.5万元"),
        ("本院认为，被告", "人的行为", "本院认为，被告人的行为"),
        ("the appeal is dis-", "missed", "the appeal is dismissed"),
        ("Between 2019,", "2020 and 2021", "Between 2019, 2020 and 2021"),  # English keeps the space
        ("paid 1,", "and then", "paid 1, and then"),
    ],
)
def test_join_lines(a, b, joined):
    assert join_lines(a, b) == joined
