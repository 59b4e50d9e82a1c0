"""Evaluation's memory grows in place (txl.memory.GROW_CALLS): each no-grad call writes its rows after the
used ones of the memory's buffers instead of copying the whole memory; results are those of copying,
bit for bit, and a memory of an earlier call stays as it was."""

from __future__ import annotations

import pytest
import torch

import txl.memory
from txl import TransformerXLConfig, TransformerXLLM

SEG, N_SEG = 4, 30  # past the buffers' room more than once: GROW_CALLS calls fit in each


@pytest.fixture()
def model() -> TransformerXLLM:
    torch.manual_seed(0)
    cfg = TransformerXLConfig(
        vocab_size=64, d_model=16, n_layer=2, n_head=2, d_head=8, d_inner=32, mem_len=16, clamp_len=-1,
        same_length=True, cutoffs=[16, 40], dropout=0.0,
    )  # fmt: skip
    return TransformerXLLM(cfg).eval()


def evaluate(model: TransformerXLLM, doc: torch.Tensor) -> tuple[list[torch.Tensor], list]:
    """Each call's NLL and the memory it was given."""
    nll, memories, memory = [], [], None
    with torch.no_grad():
        for s in range(N_SEG):
            x, y = doc[:, s * SEG : (s + 1) * SEG], doc[:, s * SEG + 1 : (s + 1) * SEG + 1]
            memories.append(memory)
            out = model(x, memory, targets=y)
            nll.append(out.nll)
            memory = out.memory
    return nll, memories


def test_growing_memory_gives_the_copying_results_and_keeps_old_memories(model, monkeypatch):
    doc = torch.randint(0, 64, (2, N_SEG * SEG + 1), generator=torch.Generator().manual_seed(1))
    grown, memories = evaluate(model, doc)
    # consecutive memories share their buffers: the rows were appended, not copied
    assert memories[5].states[0]._base is memories[6].states[0]._base
    assert memories[5].kv[1]._base is memories[6].kv[1]._base
    monkeypatch.setattr(txl.memory, "GROW_CALLS", 0)  # every call copies, as before growth
    copied, _ = evaluate(model, doc)
    for a, b in zip(grown, copied, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # a memory handed on to later calls still holds its own slots: calling from it again gives its call
    with torch.no_grad():
        for s in (3, 9, 17):
            x, y = doc[:, s * SEG : (s + 1) * SEG], doc[:, s * SEG + 1 : (s + 1) * SEG + 1]
            torch.testing.assert_close(model(x, memories[s], targets=y).nll, grown[s], rtol=0, atol=0)


def test_training_memory_is_copied(model):
    model.train()
    out = model(torch.randint(0, 64, (1, SEG)))
    again = model(torch.randint(0, 64, (1, SEG)), out.memory)
    assert again.memory.kv is None
    old, new = out.memory.states[0], again.memory.states[0]
    assert new.untyped_storage().data_ptr() != old.untyped_storage().data_ptr()
