"""Typing of English judgment PDFs against hand labels (see tests/typing_labels.py): header, body,
footnotes and disposition. Measured 96.6% of characters when the labels were made; the floor is the
issue's goal."""

from __future__ import annotations

from typing_labels import typing_accuracy


def test_typing_accuracy_on_the_hand_labels(shared_data):
    accuracy, parts, misses = typing_accuracy(shared_data)
    assert accuracy >= 0.95, (accuracy, misses)
    assert set(parts) == {"header", "body", "footnote", "disposition"}
    assert all(right / total >= 0.8 for right, total in parts.values()), parts
