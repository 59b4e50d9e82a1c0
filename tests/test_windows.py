"""PastWindows' rule of what has left the memory: tokens read since a window, or a memory reset."""

from __future__ import annotations

import torch

from txl.windows import PastWindows


def _bank(lengths: list[int]) -> PastWindows:
    bank = PastWindows()
    for i, n in enumerate(lengths):
        key = torch.nn.functional.one_hot(torch.tensor(i), 8).float()
        bank.add(key, [torch.full((n, 4), float(i)) for _ in range(3)], torch.zeros(n, dtype=torch.long))
    return bank


def test_a_window_leaves_the_memory_once_as_many_tokens_follow_it():
    bank = _bank([5, 20, 3, 7])  # tokens read after each window: 30, 10, 7, 0
    assert [bank.out_of_memory(m) for m in (0, 1, 7, 8, 10, 11, 30, 31)] == [4, 3, 3, 2, 2, 1, 1, 0]
    assert bank.out_of_memory(10, then=[4]) == 3  # 11 tokens after window 2 by then
    assert bank.out_of_memory(10, then=[2, 9]) == 4  # window 3 and the first of `then` are out too
    picked = bank.pick(torch.ones(8), k=3, memory_tokens=10)
    assert [float(layers[0][0, 0]) for layers, _ in picked] == [0.0, 1.0]  # window 2 is still in memory


def test_a_memory_reset_sends_every_window_read_so_far_out():
    bank = _bank([5, 20])
    bank.reset_memory()
    assert bank.out_of_memory(100) == 2
    bank.add(torch.ones(8), [torch.zeros(4, 4)] * 3, torch.zeros(4, dtype=torch.long))
    assert bank.out_of_memory(100) == 2 and bank.out_of_memory(1) == 2 and bank.out_of_memory(0) == 3
    bank.clear()
    assert bank.out_of_memory(0) == 0 and bank.pick(torch.ones(8), k=2, memory_tokens=0) == []
